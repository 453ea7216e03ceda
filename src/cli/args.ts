// The `tessera` command line's arguments: parsed and checked before anything loads, so a mistake is a
// usage error naming the option (exit code 2), never a stack trace from deeper down.

import { parseArgs } from 'node:util';
import type { ProfileTiming } from '../engine/types';
import type { KernelVariant } from '../gpu/adapter-info';
import type { DecodePlan } from '../model/language-model';
import { parseDeviceOption, type DeviceOption } from '../engine/choose-device';
import { chooseComputePrecisionOption, parseDtypeText, type ComputePrecision, type DtypeOption } from '../model/weights/dtype';

export const USAGE = `usage: tessera <command> [options]

commands
  run        answer a prompt about an image, a video or audio (or transcribe audio), streaming the answer
  profile    GPU time per kernel kind for one vision tile, one prefill chunk and one decode step
  serve      an OpenAI-compatible HTTP server (POST /v1/chat/completions, GET /v1/models, /health, /metrics)
  doctor     report the WebGPU adapter and run every kernel against its CPU reference
  pack       write a checkpoint's weights in one dtype (f16, q8, q4) as files an app can host and load
             as they are: its users download the packed bytes, not the original ones

run options
  --model <dir|url|x.gguf>     a Hugging Face checkpoint folder or resolve/main/ URL: SmolVLM / Idefics3
                               (images, video), Voxtral (audio), Qwen2.5-VL / Qwen3-VL; or a GGUF model
                               file (llama.cpp's layout; SmolVLM, Qwen-VL, Voxtral) with its mmproj
  --mmproj <file>              the GGUF model's mmproj file (its vision or audio tower), in the model's folder
                               (default: that folder's only mmproj*.gguf)
  --image <file>               an image (PNG, JPEG, WebP, ...); omit for a text-only prompt
  --video <file>               a video (MP4, WebM, MKV, MOV: decoded by ffmpeg; animated GIF/WebP), for
                               SmolVLM2 checkpoints; frames are sampled as the checkpoint's video_sampling says
  --video-pruning Q            drop this share 0 <= Q < 1 of the video's frame tokens (EVS; default 0)
  --audio <file>               audio (WAV; MP3, Ogg/Opus, FLAC, AAC/M4A, WebM or a video's sound through
                               ffmpeg), for Voxtral checkpoints
  --transcribe                 transcribe --audio instead of answering a prompt (no --prompt)
  --language xx                the spoken language for --transcribe, an ISO 639-1 code (default: the
                               model tells)
  --prompt "..."               the question
  --max-tokens N               most tokens to generate, N >= 1 (default 64)
  --temperature T              sample at temperature T >= 0 (default 0: greedy)
  --top-p P                    nucleus sampling, 0 < P <= 1 (with --temperature)
  --top-k K                    sample among the K likeliest tokens, K >= 0, 0: all (with --temperature)
  --seed S                     sampling seed, an integer 0 <= S < 2^32 (with --temperature)
  --device auto|webgpu|cpu|wasm
                               which backend runs the model (default auto: WebGPU on a hardware adapter,
                               else the CPU backend, onnxruntime over the checkpoint's onnx/ graphs, when
                               it has them); cpu needs the onnxruntime-node package, wasm onnxruntime-web
  --dtype f32|f16|q8|q4        weight storage (default f32); per part: --dtype vision=f16,text=q4.
                               Quantized copies are kept in $TESSERA_CACHE_DIR/weights (default
                               ~/.cache/tessera/weights) so the next run skips quantization
  --compute f32|f16            precision f16 weights are multiplied in (f16 needs shader-f16)
  --no-weight-cache            do not store or read quantized copies
  --notice "..."               a line printed before the answer
  --json                       print one JSON object: token ids, text, timings
  --variant register|workgroup force a kernel variant instead of the adapter's choice
  --decode-plan fused|separate how decode steps run: norms fused into the products (GPUs' default) or
                               a dispatch per kernel (CPU adapters' default)
  --max-binding BYTES          act as a GPU that binds at most BYTES of a buffer at once (a laptop's or a
                               phone's limit; the embedding and LM head then load in parts of rows)

profile options
  --model <dir|url>            the checkpoint, as for run
  --image <file>               the image whose first tile is profiled
  --prompt "..."               the question (default "Can you describe this image?")
  --dtype, --compute, --no-weight-cache   as for run
  --variant register|workgroup force a kernel variant instead of the adapter's choice
  --decode-plan fused|separate as for run
  --timing timestamp-query|submit-and-wait
                               how each dispatch is timed (default: GPU timestamps when the adapter has
                               timestamp-query; otherwise each dispatch is submitted alone and waited for)
  --json                       print the report as one JSON object instead of tables

pack options
  --model <dir>                the checkpoint folder to pack
  --dtype f16|q8|q4            the dtype to pack to; per part: --dtype vision=f16,text=q4
  --out <dir>                  a new folder: the packed files, tessera-pack.json and every other file
  --variant register|workgroup force a kernel variant (packing runs on the GPU)

serve options
  --model <dir|url>            the checkpoint, as for run
  --host H                     the address to listen on (default 127.0.0.1: this machine only; 0.0.0.0: all)
  --port N                     the port (default 8000; 0: any free port, printed when listening)
  --api-key KEY                requests to /v1/* must send "Authorization: Bearer KEY" (default: the
                               TESSERA_API_KEY environment variable; neither: no key needed)
  --allowed-origins A,B        origins browsers may call from (CORS), e.g. http://localhost:5173; '*': any
  --max-concurrency N          requests in the engine at once, batched together (default 64)
  --max-queue N                requests waiting beyond those; one more gets 429 with Retry-After (default 256)
  --max-body-bytes N           largest request body (default 67108864, 64 MiB); larger gets 413
  --served-model-name NAME     the model name clients send (default: the --model argument)
  --kv-cache-tokens N          tokens the KV cache holds, shared by all requests (default: the model's
                               context window)
  --enable-mm-embeds           take image_embeds content parts (embeddings computed by the client, vLLM's
                               format); only for clients you trust: embeddings are checked for shape only
  --dtype, --compute, --device, --no-weight-cache, --variant, --max-binding   as for run

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
  /** A GGUF model's mmproj file. */
  mmproj?: string;
  image?: string;
  video?: string;
  /** EVS pruning rate for the video (tessera.videoPruning). */
  videoPruning?: number;
  audio?: string;
  /** Transcribe `audio` (engine.audio.transcriptions) instead of answering `prompt`. */
  transcribe: boolean;
  language?: string;
  /** Empty for a transcription. */
  prompt: string;
  maxTokens: number;
  temperature?: number;
  topP?: number;
  topK?: number;
  seed?: number;
  /** Printed before the answer (e.g. that the bundled model's weights are random). */
  notice?: string;
  dtype?: DtypeOption;
  compute?: ComputePrecision;
  /** Which backend runs the model (undefined: auto). */
  device?: DeviceOption;
  /** Store and read quantized copies in the default cache directory (false: --no-weight-cache). */
  weightCache: boolean;
  /** Print one JSON object instead of streaming the answer. */
  json: boolean;
  variant?: KernelVariant;
  decodePlan?: DecodePlan;
  /** gpu.maxStorageBufferBindingSize. */
  maxBinding?: number;
  verbose: boolean;
}

interface DoctorArgs {
  command: 'doctor';
  variant?: KernelVariant;
  json: boolean;
  verbose: boolean;
}

export interface ProfileArgs {
  command: 'profile';
  model: string;
  mmproj?: string;
  image: string;
  /** Undefined: the engine's default question. */
  prompt?: string;
  dtype?: DtypeOption;
  compute?: ComputePrecision;
  weightCache: boolean;
  variant?: KernelVariant;
  decodePlan?: DecodePlan;
  /** Undefined: timestamps when the adapter has them. */
  timing?: ProfileTiming;
  json: boolean;
  verbose: boolean;
}

export interface ServeArgs {
  command: 'serve';
  model: string;
  mmproj?: string;
  host: string;
  port: number;
  apiKey?: string;
  allowedOrigins: string[];
  maxConcurrency?: number;
  maxQueue?: number;
  maxBodyBytes?: number;
  servedModelName: string;
  kvCacheTokens?: number;
  /** Take image_embeds parts (media.acceptEmbeddings). */
  enableMmEmbeds: boolean;
  dtype?: DtypeOption;
  compute?: ComputePrecision;
  device?: DeviceOption;
  weightCache: boolean;
  variant?: KernelVariant;
  /** gpu.maxStorageBufferBindingSize. */
  maxBinding?: number;
  json: boolean;
  verbose: boolean;
}

interface HelpArgs {
  command: 'help';
  verbose: boolean;
}

interface PackArgs {
  command: 'pack';
  model: string;
  out: string;
  dtype: DtypeOption;
  variant?: KernelVariant;
  json: boolean;
  verbose: boolean;
}

export type CliArgs = RunArgs | ProfileArgs | ServeArgs | DoctorArgs | PackArgs | HelpArgs;

const OPTIONS = {
  json: { type: 'boolean' },
  verbose: { type: 'boolean', short: 'v' },
  help: { type: 'boolean', short: 'h' },
  variant: { type: 'string' },
  'decode-plan': { type: 'string' },
  model: { type: 'string' },
  mmproj: { type: 'string' },
  image: { type: 'string' },
  video: { type: 'string' },
  'video-pruning': { type: 'string' },
  audio: { type: 'string' },
  transcribe: { type: 'boolean' },
  language: { type: 'string' },
  prompt: { type: 'string' },
  'max-tokens': { type: 'string' },
  temperature: { type: 'string' },
  'top-p': { type: 'string' },
  'top-k': { type: 'string' },
  seed: { type: 'string' },
  notice: { type: 'string' },
  dtype: { type: 'string' },
  compute: { type: 'string' },
  device: { type: 'string' },
  'no-weight-cache': { type: 'boolean' },
  timing: { type: 'string' },
  host: { type: 'string' },
  port: { type: 'string' },
  'api-key': { type: 'string' },
  'allowed-origins': { type: 'string' },
  'max-concurrency': { type: 'string' },
  'max-queue': { type: 'string' },
  'max-body-bytes': { type: 'string' },
  'served-model-name': { type: 'string' },
  'kv-cache-tokens': { type: 'string' },
  'enable-mm-embeds': { type: 'boolean' },
  out: { type: 'string' },
  'max-binding': { type: 'string' },
} as const;

type Command = Exclude<CliArgs['command'], 'help'>;

/** The commands each option belongs to (--json, --verbose and --help go with every command). */
const OWNERS: Partial<Record<keyof typeof OPTIONS, readonly Command[]>> = {
  variant: ['run', 'profile', 'serve', 'doctor', 'pack'],
  'decode-plan': ['run', 'profile'],
  model: ['run', 'profile', 'serve', 'pack'],
  mmproj: ['run', 'profile', 'serve'],
  image: ['run', 'profile'],
  video: ['run'],
  'video-pruning': ['run'],
  audio: ['run'],
  transcribe: ['run'],
  language: ['run'],
  prompt: ['run', 'profile'],
  'max-tokens': ['run'],
  temperature: ['run'],
  'top-p': ['run'],
  'top-k': ['run'],
  seed: ['run'],
  notice: ['run'],
  dtype: ['run', 'profile', 'serve', 'pack'],
  compute: ['run', 'profile', 'serve'],
  device: ['run', 'serve'],
  'no-weight-cache': ['run', 'profile', 'serve'],
  timing: ['profile'],
  host: ['serve'],
  port: ['serve'],
  'api-key': ['serve'],
  'allowed-origins': ['serve'],
  'max-concurrency': ['serve'],
  'max-queue': ['serve'],
  'max-body-bytes': ['serve'],
  'served-model-name': ['serve'],
  'kv-cache-tokens': ['serve'],
  'enable-mm-embeds': ['serve'],
  out: ['pack'],
  'max-binding': ['run', 'serve'],
};

/** A usage error for the first option given that `command` does not take, naming the commands that do. */
function checkOwners(command: Command, values: Record<string, unknown>): void {
  for (const [name, owners] of Object.entries(OWNERS)) {
    if (values[name] !== undefined && !owners.includes(command)) {
      const list = owners.length > 1 ? `${owners.slice(0, -1).join(', ')} and ${owners.at(-1)}` : owners[0];
      throw new UsageError(`--${name} is a ${list} option`);
    }
  }
}

function parseDecodePlan(plan: string | undefined): DecodePlan | undefined {
  if (plan !== undefined && plan !== 'fused' && plan !== 'separate') {
    throw new UsageError(`--decode-plan must be 'fused' or 'separate', got '${plan}'`);
  }
  return plan;
}

function parseVariant(variant: string | undefined): KernelVariant | undefined {
  if (variant !== undefined && variant !== 'register' && variant !== 'workgroup') {
    throw new UsageError(`--variant must be 'register' or 'workgroup', got '${variant}'`);
  }
  return variant;
}

function maxBinding(raw: string | undefined): number | undefined {
  return numberOption('max-binding', raw, { integer: true, min: 1024, reads: 'a whole number of bytes >= 1024' });
}

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

/** A parser from model/weights/dtype.ts whose named error becomes a usage error here. */
function usage<T>(parse: () => T): T {
  try {
    return parse();
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
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
  if (command === 'run' || command === 'profile' || command === 'serve' || command === 'doctor' || command === 'pack') {
    checkOwners(command, values);
  }
  const weights = () => ({
    dtype: values.dtype === undefined ? undefined : usage(() => parseDtypeText(values.dtype!)),
    compute: values.compute === undefined ? undefined : usage(() => chooseComputePrecisionOption(values.compute!)),
    weightCache: !values['no-weight-cache'],
  });
  if (command === 'run') {
    if (!values.model) throw new UsageError('run needs --model <dir|url>');
    const transcribe = values.transcribe === true;
    if (transcribe) {
      if (!values.audio) throw new UsageError('--transcribe needs --audio <file>');
      if (values.prompt !== undefined || values.image || values.video)
        throw new UsageError('--transcribe takes --audio only (no --prompt, --image or --video)');
    } else if (!values.prompt) {
      throw new UsageError('run needs --prompt "..." (or --transcribe with --audio)');
    }
    if (values.language !== undefined && !transcribe) throw new UsageError('--language goes with --transcribe');
    if (values.language !== undefined && !/^[a-z]{2}$/.test(values.language)) {
      throw new UsageError(`--language must be a two-letter ISO 639-1 code such as 'en', got '${values.language}'`);
    }
    return {
      command,
      model: values.model,
      mmproj: values.mmproj,
      image: values.image,
      video: values.video,
      audio: values.audio,
      transcribe,
      language: values.language,
      videoPruning: numberOption('video-pruning', values['video-pruning'], {
        min: 0,
        max: 0.999999,
        reads: 'a number from 0 up to (not including) 1',
      }),
      prompt: values.prompt ?? '',
      maxTokens:
        numberOption('max-tokens', values['max-tokens'], { integer: true, min: 1, reads: 'an integer >= 1' }) ?? (transcribe ? 512 : 64),
      temperature: numberOption('temperature', values.temperature, { min: 0, reads: 'a number >= 0' }),
      topP: numberOption('top-p', values['top-p'], { min: 0, above: true, max: 1, reads: 'a number above 0 and at most 1' }),
      topK: numberOption('top-k', values['top-k'], { integer: true, min: 0, reads: 'an integer >= 0' }),
      seed: numberOption('seed', values.seed, { integer: true, min: 0, max: 2 ** 32 - 1, reads: 'an integer from 0 to 4294967295' }),
      notice: values.notice,
      ...weights(),
      ...(values.device !== undefined ? { device: usage(() => parseDeviceOption(values.device, '--device')) } : {}),
      json,
      variant: parseVariant(values.variant),
      decodePlan: parseDecodePlan(values['decode-plan']),
      maxBinding: maxBinding(values['max-binding']),
      verbose,
    };
  }
  if (command === 'pack') {
    if (!values.model) throw new UsageError('pack needs --model <dir>');
    if (!values.out) throw new UsageError('pack needs --out <dir>');
    if (!values.dtype) throw new UsageError('pack needs --dtype f16|q8|q4');
    return {
      command,
      model: values.model,
      out: values.out,
      dtype: usage(() => parseDtypeText(values.dtype!)),
      variant: parseVariant(values.variant),
      json,
      verbose,
    };
  }
  if (command === 'profile') {
    if (!values.model) throw new UsageError('profile needs --model <dir|url>');
    if (!values.image) throw new UsageError('profile needs --image <file>');
    if (values.prompt === '') throw new UsageError('--prompt must not be empty');
    const timing = values.timing;
    if (timing !== undefined && timing !== 'timestamp-query' && timing !== 'submit-and-wait') {
      throw new UsageError(`--timing must be 'timestamp-query' or 'submit-and-wait', got '${timing}'`);
    }
    return {
      command,
      model: values.model,
      mmproj: values.mmproj,
      image: values.image,
      prompt: values.prompt,
      ...weights(),
      variant: parseVariant(values.variant),
      decodePlan: parseDecodePlan(values['decode-plan']),
      timing,
      json,
      verbose,
    };
  }
  if (command === 'serve') {
    if (!values.model) throw new UsageError('serve needs --model <dir|url>');
    const origins = (values['allowed-origins'] ?? '')
      .split(',')
      .map((o) => o.trim())
      .filter((o) => o !== '');
    for (const o of origins) {
      if (o !== '*' && !/^https?:\/\/[^/\s]+$/.test(o)) {
        throw new UsageError(
          `--allowed-origins takes origins such as http://localhost:5173 (scheme, host and port, no path) or '*', got '${o}'`,
        );
      }
    }
    const apiKey = values['api-key'] ?? process.env.TESSERA_API_KEY;
    if (apiKey !== undefined && apiKey.trim() === '') throw new UsageError('--api-key must not be empty');
    return {
      command,
      model: values.model,
      mmproj: values.mmproj,
      host: values.host ?? '127.0.0.1',
      port: numberOption('port', values.port, { integer: true, min: 0, max: 65535, reads: 'an integer from 0 to 65535' }) ?? 8000,
      ...(apiKey !== undefined ? { apiKey } : {}),
      allowedOrigins: origins,
      maxConcurrency: numberOption('max-concurrency', values['max-concurrency'], { integer: true, min: 1, reads: 'an integer >= 1' }),
      maxQueue: numberOption('max-queue', values['max-queue'], { integer: true, min: 0, reads: 'an integer >= 0' }),
      maxBodyBytes: numberOption('max-body-bytes', values['max-body-bytes'], { integer: true, min: 1024, reads: 'an integer >= 1024' }),
      servedModelName: values['served-model-name'] ?? values.model,
      kvCacheTokens: numberOption('kv-cache-tokens', values['kv-cache-tokens'], { integer: true, min: 1, reads: 'an integer >= 1' }),
      enableMmEmbeds: values['enable-mm-embeds'] === true,
      ...weights(),
      ...(values.device !== undefined ? { device: usage(() => parseDeviceOption(values.device, '--device')) } : {}),
      variant: parseVariant(values.variant),
      maxBinding: maxBinding(values['max-binding']),
      json,
      verbose,
    };
  }
  if (command === 'doctor') return { command, variant: parseVariant(values.variant), json, verbose };
  throw new UsageError(`unknown command '${command}'`);
}
