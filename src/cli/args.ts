// The `tessera` command line's arguments: parsed and checked before anything loads, so a mistake is a
// usage error naming the option (exit code 2), never a stack trace from deeper down.

import { parseArgs } from 'node:util';
import type { KernelVariant } from '../gpu/adapter-info';

export const USAGE = `usage: tessera <command> [options]

commands
  run        answer a prompt about an image, streaming the answer
  doctor     report the WebGPU adapter and run every kernel against its CPU reference

run options
  --model <dir|url>            a Hugging Face SmolVLM / Idefics3 checkpoint folder or resolve/main/ URL
  --image <file>               an image (PNG, JPEG, WebP, ...); omit for a text-only prompt
  --prompt "..."               the question
  --max-tokens N               most tokens to generate, N >= 1 (default 64)
  --temperature T              sample at temperature T >= 0 (default 0: greedy)
  --top-p P                    nucleus sampling, 0 < P <= 1 (with --temperature)
  --top-k K                    sample among the K likeliest tokens, K >= 0, 0: all (with --temperature)
  --seed S                     sampling seed, an integer 0 <= S < 2^32 (with --temperature)
  --notice "..."               a line printed before the answer
  --json                       print one JSON object: token ids, text, timings

doctor options
  --variant register|workgroup force a kernel variant instead of the adapter's choice
  --json                       print one JSON object instead of the readable report

  -v, --verbose                on an error, print its stack trace and causes too
  -h, --help                   show this help`;

/** A mistake in the command line: printed with the usage text, exit code 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export interface RunArgs {
  command: 'run';
  model: string;
  image?: string;
  prompt: string;
  maxTokens: number;
  temperature?: number;
  topP?: number;
  topK?: number;
  seed?: number;
  /** Printed before the answer (e.g. that the bundled model's weights are random). */
  notice?: string;
  /** Print one JSON object instead of streaming the answer. */
  json: boolean;
  verbose: boolean;
}

export interface DoctorArgs {
  command: 'doctor';
  variant?: KernelVariant;
  json: boolean;
  verbose: boolean;
}

export interface HelpArgs {
  command: 'help';
  verbose: boolean;
}

export type CliArgs = RunArgs | DoctorArgs | HelpArgs;

const OPTIONS = {
  json: { type: 'boolean' },
  verbose: { type: 'boolean', short: 'v' },
  help: { type: 'boolean', short: 'h' },
  variant: { type: 'string' },
  model: { type: 'string' },
  image: { type: 'string' },
  prompt: { type: 'string' },
  'max-tokens': { type: 'string' },
  temperature: { type: 'string' },
  'top-p': { type: 'string' },
  'top-k': { type: 'string' },
  seed: { type: 'string' },
  notice: { type: 'string' },
} as const;

const RUN_ONLY = ['model', 'image', 'prompt', 'max-tokens', 'temperature', 'top-p', 'top-k', 'seed', 'notice'] as const;

/** Whether argv asks for a stack trace on errors (read even when the rest does not parse). */
export function wantsVerbose(argv: readonly string[]): boolean {
  return argv.includes('--verbose') || argv.includes('-v');
}

interface NumberRule {
  integer?: boolean;
  min: number;
  /** Exclusive lower bound instead of `min`. */
  above?: boolean;
  max?: number;
  /** How the rule reads in the message, e.g. 'an integer >= 1'. */
  reads: string;
}

function numberOption(name: string, raw: string | undefined, rule: NumberRule): number | undefined {
  if (raw === undefined) return undefined;
  const n = raw.trim() === '' ? Number.NaN : Number(raw);
  const ok =
    Number.isFinite(n) &&
    (!rule.integer || Number.isInteger(n)) &&
    (rule.above ? n > rule.min : n >= rule.min) &&
    (rule.max === undefined || n <= rule.max);
  if (!ok) throw new UsageError(`--${name} must be ${rule.reads}, got '${raw}'`);
  return n;
}

/**
 * `--max-tokens -5` as `--max-tokens=-5`: parseArgs refuses a value that starts with a dash, but a
 * negative number after a value option is meant as its value (and then gets the range message).
 */
function joinNegativeNumbers(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const name = argv[i].startsWith('--') ? argv[i].slice(2) : undefined;
    const takesValue = name !== undefined && OPTIONS[name as keyof typeof OPTIONS]?.type === 'string';
    if (takesValue && i + 1 < argv.length && /^-(\d|\.\d)/.test(argv[i + 1])) out.push(`${argv[i]}=${argv[++i]}`);
    else out.push(argv[i]);
  }
  return out;
}

/** Node's parseArgs errors (unknown option, missing value, ...) as usage errors with its message. */
function parse(argv: readonly string[]) {
  try {
    return parseArgs({ args: joinNegativeNumbers(argv), allowPositionals: true, strict: true, options: OPTIONS });
  } catch (e) {
    const code = (e as { code?: string }).code ?? '';
    if (code.startsWith('ERR_PARSE_ARGS_')) throw new UsageError((e as Error).message);
    throw e;
  }
}

export function parseCliArgs(argv: readonly string[]): CliArgs {
  const { values, positionals } = parse(argv);
  const verbose = values.verbose ?? false;
  const json = values.json ?? false;
  const [command, ...extra] = positionals;
  if (values.help) return { command: 'help', verbose };
  if (command === undefined) throw new UsageError('no command given');
  if (extra.length > 0) throw new UsageError(`unexpected argument '${extra[0]}' (quote a prompt with spaces: --prompt "...")`);
  if (command === 'run') {
    if (values.variant !== undefined) throw new UsageError('--variant is a doctor option');
    if (!values.model) throw new UsageError('run needs --model <dir|url>');
    if (!values.prompt) throw new UsageError('run needs --prompt "..."');
    return {
      command,
      model: values.model,
      image: values.image,
      prompt: values.prompt,
      maxTokens: numberOption('max-tokens', values['max-tokens'], { integer: true, min: 1, reads: 'an integer >= 1' }) ?? 64,
      temperature: numberOption('temperature', values.temperature, { min: 0, reads: 'a number >= 0' }),
      topP: numberOption('top-p', values['top-p'], { min: 0, above: true, max: 1, reads: 'a number above 0 and at most 1' }),
      topK: numberOption('top-k', values['top-k'], { integer: true, min: 0, reads: 'an integer >= 0' }),
      seed: numberOption('seed', values.seed, { integer: true, min: 0, max: 2 ** 32 - 1, reads: 'an integer from 0 to 4294967295' }),
      notice: values.notice,
      json,
      verbose,
    };
  }
  if (command === 'doctor') {
    const misplaced = RUN_ONLY.find((o) => values[o] !== undefined);
    if (misplaced) throw new UsageError(`--${misplaced} is a run option`);
    const variant = values.variant;
    if (variant !== undefined && variant !== 'register' && variant !== 'workgroup') {
      throw new UsageError(`--variant must be 'register' or 'workgroup', got '${variant}'`);
    }
    return { command, variant, json, verbose };
  }
  throw new UsageError(`unknown command '${command}'`);
}
