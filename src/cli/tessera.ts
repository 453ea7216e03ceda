#!/usr/bin/env node
// The `tessera` command line.
//   tessera run --model <dir|url> --image <file> --prompt "..." [--max-tokens N] [--temperature T] [--dtype D] [--json]
//   tessera doctor [--json] [--variant register|workgroup]

import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { TesseraError } from '../errors';
import type { KernelVariant } from '../gpu/adapter-info';
import { createNodeGpuContext } from '../gpu/node';
import { chooseComputePrecisionOption, parseDtypeText } from '../model/weights/dtype';
import { doctor } from './doctor';
import { run } from './run';

const USAGE = `usage: tessera <command> [options]

commands
  run        answer a prompt about an image, streaming the answer
  doctor     report the WebGPU adapter and run every kernel against its CPU reference

run options
  --model <dir|url>            a Hugging Face SmolVLM / Idefics3 checkpoint folder or resolve/main/ URL
  --image <file>               an image (PNG, JPEG, WebP, ...); omit for a text-only prompt
  --prompt "..."               the question
  --max-tokens N               most tokens to generate (default 64)
  --temperature T              sample at temperature T (default: greedy)
  --top-p P, --top-k K, --seed S   sampling controls (with --temperature)
  --dtype f32|f16|q8|q4        weight storage (default f32); per part: --dtype vision=f16,text=q4.
                               Quantized copies are kept in $TESSERA_CACHE_DIR/weights (default
                               ~/.cache/tessera/weights) so the next run skips quantization
  --compute f32|f16            precision f16 weights are multiplied in (f16 needs shader-f16)
  --no-weight-cache            do not store or read quantized copies
  --notice "..."               a line printed before the answer
  --json                       print one JSON object: token ids, text, timings

doctor options
  --variant register|workgroup force a kernel variant instead of the adapter's choice
  --json                       print one JSON object instead of the readable report

  -h, --help                   show this help`;

/**
 * Dawn's Linux build loads libwayland-client, which prints "XDG_RUNTIME_DIR is invalid" on every start
 * when the variable is unset (headless machines, CI). Give it a private directory so the CLI's output
 * is only Tessera's.
 */
function quietWayland(): void {
  if (process.platform !== 'linux' || process.env.XDG_RUNTIME_DIR) return;
  const dir = join(tmpdir(), `tessera-runtime-${process.getuid?.() ?? 'user'}`);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  process.env.XDG_RUNTIME_DIR = dir;
}

function numberOption(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isFinite(n)) throw new UsageError(`--${name} must be a number, got '${value}'`);
  return n;
}

class UsageError extends Error {}

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      json: { type: 'boolean', default: false },
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
      dtype: { type: 'string' },
      compute: { type: 'string' },
      'no-weight-cache': { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  const command = positionals[0];
  if (values.help || !command) {
    console.log(USAGE);
    return values.help ? 0 : 2;
  }
  quietWayland();
  if (command === 'run') {
    if (!values.model || !values.prompt) throw new UsageError('run needs --model and --prompt');
    return run({
      model: values.model,
      image: values.image,
      prompt: values.prompt,
      maxTokens: numberOption('max-tokens', values['max-tokens']) ?? 64,
      temperature: numberOption('temperature', values.temperature),
      topP: numberOption('top-p', values['top-p']),
      topK: numberOption('top-k', values['top-k']),
      seed: numberOption('seed', values.seed),
      json: values.json,
      notice: values.notice,
      dtype: values.dtype === undefined ? undefined : parseDtypeText(values.dtype),
      compute: values.compute === undefined ? undefined : chooseComputePrecisionOption(values.compute),
      weightCache: !values['no-weight-cache'],
      out: (t) => process.stdout.write(t),
      err: (t) => process.stderr.write(t),
    });
  }
  if (command !== 'doctor') throw new UsageError(`unknown command '${command}'`);
  const variant = values.variant as KernelVariant | undefined;
  if (variant && variant !== 'register' && variant !== 'workgroup') {
    throw new UsageError(`--variant must be 'register' or 'workgroup', got '${variant}'`);
  }
  const gpu = await createNodeGpuContext({ kernelVariant: variant });
  try {
    const lines: string[] = [];
    const print = values.json ? (l: string) => lines.push(l) : (l: string) => console.log(l);
    const result = await doctor(gpu, print);
    if (values.json) console.log(JSON.stringify({ adapter: gpu.adapter, ...result }));
    return result.pass ? 0 : 1;
  } finally {
    gpu.destroy();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e: unknown) => {
    if (e instanceof UsageError) console.error(`tessera: ${e.message}\n\n${USAGE}`);
    else if (e instanceof TesseraError) console.error(`tessera: ${e.name}: ${e.message}`);
    else console.error(e);
    process.exit(e instanceof UsageError ? 2 : 1);
  },
);
