// The command line's argument checks and error lines (src/cli/args.ts, src/cli/report-error.ts). The
// installed `tessera` binary is run end to end in test/consumer/.

import { describe, expect, it } from 'vitest';
import { parseCliArgs, UsageError } from '../../src/cli/args';
import { exitCodeFor, formatCliError } from '../../src/cli/report-error';
import { ContextLengthError, ImageDecodeError } from '../../src/errors';
import { fromWireError, toWireError } from '../../src/protocol/errors';

const RUN = ['run', '--model', 'm', '--prompt', 'p'];

function usageMessage(argv: string[]): string {
  try {
    parseCliArgs(argv);
  } catch (e) {
    expect(e).toBeInstanceOf(UsageError);
    return (e as Error).message;
  }
  throw new Error(`no usage error for ${argv.join(' ')}`);
}

describe('tessera arguments', () => {
  it('parses a run with every option', () => {
    const args = parseCliArgs([
      ...RUN,
      '--image',
      'a.png',
      '--max-tokens',
      '7',
      '--temperature',
      '0.5',
      '--top-p',
      '0.9',
      '--top-k',
      '0',
      '--seed',
      '3',
      '--json',
      '-v',
    ]);
    expect(args).toEqual({
      command: 'run',
      model: 'm',
      prompt: 'p',
      image: 'a.png',
      video: undefined,
      videoPruning: undefined,
      audio: undefined,
      transcribe: false,
      language: undefined,
      maxTokens: 7,
      temperature: 0.5,
      topP: 0.9,
      topK: 0,
      seed: 3,
      notice: undefined,
      dtype: undefined,
      compute: undefined,
      weightCache: true,
      json: true,
      verbose: true,
    });
    expect(parseCliArgs([...RUN, '--dtype', 'vision=f16,text=q4', '--compute', 'f16', '--no-weight-cache'])).toMatchObject({
      dtype: { vision: 'f16', text: 'q4' },
      compute: 'f16',
      weightCache: false,
    });
    expect(parseCliArgs([...RUN, '--video', 'clip.mp4', '--video-pruning', '0.5'])).toMatchObject({ video: 'clip.mp4', videoPruning: 0.5 });
    expect(parseCliArgs(RUN)).toMatchObject({ maxTokens: 64, temperature: undefined, variant: undefined });
    expect(parseCliArgs([...RUN, '--variant', 'workgroup'])).toMatchObject({ variant: 'workgroup' });
    expect(parseCliArgs([...RUN, '--decode-plan', 'separate'])).toMatchObject({ decodePlan: 'separate' });
    expect(parseCliArgs([...RUN, '--device', 'cpu'])).toMatchObject({ device: 'cpu' });
    expect(parseCliArgs(RUN)).not.toHaveProperty('device');
  });

  it('audio: --audio with a prompt, or --transcribe (with --language) without one', () => {
    expect(parseCliArgs([...RUN, '--audio', 'a.wav'])).toMatchObject({ audio: 'a.wav', transcribe: false, prompt: 'p', maxTokens: 64 });
    expect(parseCliArgs(['run', '--model', 'm', '--audio', 'a.mp3', '--transcribe', '--language', 'fr'])).toMatchObject({
      audio: 'a.mp3',
      transcribe: true,
      language: 'fr',
      prompt: '',
      maxTokens: 512,
    });
    expect(usageMessage(['run', '--model', 'm', '--transcribe'])).toBe('--transcribe needs --audio <file>');
    expect(usageMessage([...RUN, '--audio', 'a.wav', '--transcribe'])).toMatch(/--transcribe takes --audio only/);
    expect(usageMessage(['run', '--model', 'm', '--audio', 'a.wav'])).toMatch(/run needs --prompt "..." \(or --transcribe with --audio\)/);
    expect(usageMessage([...RUN, '--audio', 'a.wav', '--language', 'en'])).toBe('--language goes with --transcribe');
    expect(usageMessage(['run', '--model', 'm', '--audio', 'a.wav', '--transcribe', '--language', 'English'])).toMatch(
      /two-letter ISO 639-1/,
    );
    expect(usageMessage(['profile', '--model', 'm', '--image', 'x.png', '--audio', 'a.wav'])).toBe('--audio is a run option');
  });

  it('refuses numbers out of range or not numbers, naming the option and the value', () => {
    expect(usageMessage([...RUN, '--max-tokens', '-5'])).toBe("--max-tokens must be an integer >= 1, got '-5'");
    expect(usageMessage([...RUN, '--max-tokens=-5'])).toBe("--max-tokens must be an integer >= 1, got '-5'");
    expect(usageMessage([...RUN, '--max-tokens', '0'])).toBe("--max-tokens must be an integer >= 1, got '0'");
    expect(usageMessage([...RUN, '--max-tokens', '2.5'])).toBe("--max-tokens must be an integer >= 1, got '2.5'");
    expect(usageMessage([...RUN, '--max-tokens', 'ten'])).toBe("--max-tokens must be an integer >= 1, got 'ten'");
    expect(usageMessage([...RUN, '--temperature', '-0.1'])).toBe("--temperature must be a number >= 0, got '-0.1'");
    expect(usageMessage([...RUN, '--top-p', '0'])).toMatch(/^--top-p must be a number above 0 and at most 1/);
    expect(usageMessage([...RUN, '--top-p', '1.5'])).toMatch(/^--top-p must be/);
    expect(usageMessage([...RUN, '--seed', '4294967296'])).toMatch(/^--seed must be an integer from 0 to 4294967295/);
    expect(usageMessage([...RUN, '--seed', ''])).toMatch(/^--seed must be/);
    expect(usageMessage([...RUN, '--video-pruning', '1'])).toBe("--video-pruning must be a number from 0 up to (not including) 1, got '1'");
    expect(usageMessage([...RUN, '--dtype', 'q3'])).toMatch(/--dtype: unknown weight dtype "q3"; use one of f32, f16, q8, q4/);
    expect(usageMessage([...RUN, '--compute', 'f64'])).toMatch(/--compute: unknown weight dtype "f64"/);
    expect(usageMessage([...RUN, '--device', 'gpu'])).toBe(`--device must be one of 'auto', 'webgpu', 'wasm', 'cpu'; got "gpu"`);
  });

  it('refuses unknown options, missing values, stray words and misplaced options', () => {
    expect(usageMessage([...RUN, '--frobnicate'])).toMatch(/Unknown option '--frobnicate'/);
    expect(usageMessage([...RUN, '--max-tokens'])).toMatch(/--max-tokens/);
    expect(usageMessage(['run', '--model', 'm', '--prompt', 'what', 'is', 'this'])).toMatch(/unexpected argument 'is'/);
    expect(usageMessage(['run', '--prompt', 'p'])).toBe('run needs --model <dir|url>');
    expect(usageMessage(['doctor', '--model', 'm'])).toBe('--model is a run, profile, serve and pack option');
    expect(usageMessage(['doctor', '--max-tokens', '3'])).toBe('--max-tokens is a run option');
    expect(usageMessage(['doctor', '--image', 'a.png'])).toBe('--image is a run and profile option');
    expect(usageMessage([...RUN, '--variant', 'fast'])).toBe("--variant must be 'register' or 'workgroup', got 'fast'");
    expect(usageMessage([...RUN, '--decode-plan', 'fast'])).toBe("--decode-plan must be 'fused' or 'separate', got 'fast'");
    expect(usageMessage([...RUN, '--timing', 'submit-and-wait'])).toBe('--timing is a profile option');
    expect(usageMessage(['doctor', '--variant', 'fast'])).toBe("--variant must be 'register' or 'workgroup', got 'fast'");
    expect(usageMessage(['frobnicate'])).toBe("unknown command 'frobnicate'");
    expect(usageMessage([])).toBe('no command given');
  });
});

describe('tessera profile arguments', () => {
  const PROFILE = ['profile', '--model', 'm', '--image', 'a.png'];

  it('parses a profile with every option, and with none of the optional ones', () => {
    const args = parseCliArgs([
      ...PROFILE,
      '--prompt',
      'p',
      '--dtype',
      'q4',
      '--compute',
      'f16',
      '--no-weight-cache',
      '--variant',
      'workgroup',
      '--timing',
      'submit-and-wait',
      '--json',
      '-v',
    ]);
    expect(args).toEqual({
      command: 'profile',
      model: 'm',
      image: 'a.png',
      prompt: 'p',
      dtype: 'q4',
      compute: 'f16',
      weightCache: false,
      variant: 'workgroup',
      timing: 'submit-and-wait',
      json: true,
      verbose: true,
    });
    expect(parseCliArgs(PROFILE)).toEqual({
      command: 'profile',
      model: 'm',
      image: 'a.png',
      prompt: undefined,
      dtype: undefined,
      compute: undefined,
      weightCache: true,
      variant: undefined,
      timing: undefined,
      json: false,
      verbose: false,
    });
    expect(parseCliArgs([...PROFILE, '--timing', 'timestamp-query', '--dtype', 'vision=f16,text=q8'])).toMatchObject({
      timing: 'timestamp-query',
      dtype: { vision: 'f16', text: 'q8' },
    });
  });

  it('refuses a missing model or image, bad values and options of other commands', () => {
    expect(usageMessage(['profile', '--image', 'a.png'])).toBe('profile needs --model <dir|url>');
    expect(usageMessage(['profile', '--model', 'm'])).toBe('profile needs --image <file>');
    expect(usageMessage([...PROFILE, '--prompt', ''])).toBe('--prompt must not be empty');
    expect(usageMessage([...PROFILE, '--timing', 'cpu'])).toBe("--timing must be 'timestamp-query' or 'submit-and-wait', got 'cpu'");
    expect(usageMessage([...PROFILE, '--variant', 'fast'])).toBe("--variant must be 'register' or 'workgroup', got 'fast'");
    expect(usageMessage([...PROFILE, '--dtype', 'q3'])).toMatch(/--dtype: unknown weight dtype "q3"/);
    expect(usageMessage([...PROFILE, '--max-tokens', '4'])).toBe('--max-tokens is a run option');
    expect(usageMessage([...PROFILE, '--video', 'c.mp4'])).toBe('--video is a run option');
    expect(usageMessage([...PROFILE, '--temperature', '1'])).toBe('--temperature is a run option');
    expect(usageMessage([...PROFILE, 'extra'])).toMatch(/unexpected argument 'extra'/);
  });
});

describe('tessera serve arguments', () => {
  it('parses serve with its defaults and every option', () => {
    expect(parseCliArgs(['serve', '--model', 'm'])).toMatchObject({
      command: 'serve',
      model: 'm',
      host: '127.0.0.1',
      port: 8000,
      allowedOrigins: [],
      servedModelName: 'm',
      weightCache: true,
    });
    expect(
      parseCliArgs([
        'serve',
        '--model',
        'm',
        '--host',
        '0.0.0.0',
        '--port',
        '0',
        '--api-key',
        'k',
        '--allowed-origins',
        'http://localhost:5173, https://a.example',
        '--max-concurrency',
        '8',
        '--max-queue',
        '0',
        '--max-body-bytes',
        '4096',
        '--served-model-name',
        'tiny',
        '--kv-cache-tokens',
        '4096',
        '--device',
        'cpu',
        '--dtype',
        'q8',
        '--no-weight-cache',
      ]),
    ).toMatchObject({
      host: '0.0.0.0',
      port: 0,
      apiKey: 'k',
      allowedOrigins: ['http://localhost:5173', 'https://a.example'],
      maxConcurrency: 8,
      maxQueue: 0,
      maxBodyBytes: 4096,
      servedModelName: 'tiny',
      kvCacheTokens: 4096,
      device: 'cpu',
      weightCache: false,
    });
  });

  it('refuses a bad port, origin, limit or key, and run-only options', () => {
    expect(usageMessage(['serve'])).toBe('serve needs --model <dir|url>');
    expect(usageMessage(['serve', '--model', 'm', '--port', '70000'])).toBe("--port must be an integer from 0 to 65535, got '70000'");
    expect(usageMessage(['serve', '--model', 'm', '--allowed-origins', 'localhost:5173'])).toMatch(
      /^--allowed-origins takes origins such as/,
    );
    expect(usageMessage(['serve', '--model', 'm', '--max-concurrency', '0'])).toBe("--max-concurrency must be an integer >= 1, got '0'");
    expect(usageMessage(['serve', '--model', 'm', '--api-key', ' '])).toBe('--api-key must not be empty');
    expect(usageMessage(['serve', '--model', 'm', '--prompt', 'hi'])).toBe('--prompt is a run and profile option');
    expect(usageMessage(['run', '--model', 'm', '--prompt', 'hi', '--port', '1'])).toBe('--port is a serve option');
  });
});

describe('tessera error lines', () => {
  it('prints a named error as one line without a stack; --verbose adds it', () => {
    const e = new ContextLengthError(21681, 64, 8192);
    expect(formatCliError(e, false)).toBe(`tessera: ContextLengthError: ${e.message}`);
    expect(formatCliError(e, true)).toContain(`tessera: ContextLengthError: ${e.message}\n\nContextLengthError: ${e.message}\n    at `);
    expect(exitCodeFor(e)).toBe(1);
  });

  it('prints an error rebuilt from a worker the same way', () => {
    const rebuilt = fromWireError(toWireError(new ImageDecodeError('image has 0 bytes; send the file contents, not an empty buffer.')));
    expect(formatCliError(rebuilt, false)).toBe(
      'tessera: ImageDecodeError: image has 0 bytes; send the file contents, not an empty buffer.',
    );
  });

  it('points at --verbose for an unexpected error, and shows its causes with it', () => {
    const e = new TypeError('x is undefined', { cause: new RangeError('inner') });
    expect(formatCliError(e, false)).toBe('tessera: TypeError: x is undefined\n(run again with --verbose for the stack trace)');
    expect(formatCliError(e, true)).toMatch(/caused by: RangeError: inner\n\s+at /);
  });

  it('prints usage errors with the usage text and exit code 2', () => {
    const e = new UsageError('no command given');
    expect(formatCliError(e, false)).toMatch(/^tessera: no command given\n\nusage: tessera <command>/);
    expect(exitCodeFor(e)).toBe(2);
  });
});

describe('tessera pack arguments', () => {
  it('parses pack with a dtype (one, or per part) and a variant', () => {
    expect(parseCliArgs(['pack', '--model', 'm', '--dtype', 'q4', '--out', 'o'])).toEqual({
      command: 'pack',
      model: 'm',
      out: 'o',
      dtype: 'q4',
      variant: undefined,
      json: false,
      verbose: false,
    });
    const perPart = parseCliArgs(['pack', '--model', 'm', '--dtype', 'vision=f16,text=q4', '--out', 'o', '--variant', 'register']);
    expect(perPart).toMatchObject({ dtype: { vision: 'f16', text: 'q4' }, variant: 'register' });
  });

  it('refuses a missing model, dtype or output folder, and options of other commands', () => {
    expect(usageMessage(['pack', '--dtype', 'q4', '--out', 'o'])).toBe('pack needs --model <dir>');
    expect(usageMessage(['pack', '--model', 'm', '--dtype', 'q4'])).toBe('pack needs --out <dir>');
    expect(usageMessage(['pack', '--model', 'm', '--out', 'o'])).toBe('pack needs --dtype f16|q8|q4');
    expect(usageMessage(['pack', '--model', 'm', '--out', 'o', '--dtype', 'q3'])).toMatch(/--dtype: unknown weight dtype "q3"/);
    expect(usageMessage(['pack', '--model', 'm', '--out', 'o', '--dtype', 'q4', '--prompt', 'p'])).toBe(
      '--prompt is a run and profile option',
    );
    expect(usageMessage([...RUN, '--out', 'o'])).toBe('--out is a pack option');
  });
});

describe('--max-binding', () => {
  it('run and serve take a byte count of at least 1024; other commands refuse it', () => {
    expect(parseCliArgs([...RUN, '--max-binding', '134217728'])).toMatchObject({ maxBinding: 134217728 });
    expect(parseCliArgs(['serve', '--model', 'm', '--max-binding', '4096'])).toMatchObject({ maxBinding: 4096 });
    expect(usageMessage([...RUN, '--max-binding', '100'])).toBe("--max-binding must be a whole number of bytes >= 1024, got '100'");
    expect(usageMessage([...RUN, '--max-binding', '2048.5'])).toBe("--max-binding must be a whole number of bytes >= 1024, got '2048.5'");
    expect(usageMessage(['doctor', '--max-binding', '4096'])).toBe('--max-binding is a run and serve option');
  });
});
