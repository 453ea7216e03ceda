// Tessera as a user installs it: the package is packed (`npm pack`, after the build in
// global-setup.ts), installed into a fresh Vite + TypeScript app generated in a temp folder (npm registry
// only, npm's cache first), type-checked strictly, built, served and run in headless Chromium with
// DEFAULT options (encoder Web Workers) against the bundled tiny model; then a Node program imports
// 'tessera/node' from the same install, type-checked with NodeNext and node16 (with and without the DOM
// lib), and must exit by itself after engine.destroy(); then the installed `tessera` command; then a Deno
// program (npm's deno) imports 'tessera' from the same install and answers. Steps run in
// order, each on the last one's results. Every step logs its wall time.
//
// What a broken package does here: a missing worker file fails the app's `vite build` (and the file list),
// a missing or `any` type fails tsc (the apps' @ts-expect-error lines), a missing entry point fails tsc,
// the build and the Node import.

import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { goldenTokens } from '../e2e/goldens';
import { batchAgreement, type ScoredAnswer } from '../helpers/batch-agreement';
import { cleanEnv, expectSuccess, openApp, run, runExpectingExit, type Server, startNext, startVite, type CommandResult } from './harness';

const root = resolve(import.meta.dirname, '../..');
const TEMPLATE = join(import.meta.dirname, 'app');
/** The error-name check the unit test runs on the source, run again inside both apps. */
const ERROR_CLASSES = join(root, 'test/helpers/error-classes.ts');
const GOLDEN = goldenTokens('smolvlm-tiny');
const NODE_MAX_TOKENS = 4;
const DENO_MAX_TOKENS = 6;
/** Next.js (its default bundler, Turbopack) and the React it takes, as `npx create-next-app` installs them. */
const NEXT = '16.4.6';
const REACT = '19.3.1';
/** The last TypeScript without WebGPU in lib.dom. */
const TS5 = '5.9.3';
/** The version this repository uses, so the app installs what npm's cache already holds. */
const version = (pkg: string) => JSON.parse(readFileSync(join(root, 'node_modules', pkg, 'package.json'), 'utf8')).version as string;

let work: string;
let app: string;
let tarball: string;

function timed<T extends CommandResult>(label: string, r: T): T {
  console.log(`[consumer] ${label}: ${(r.ms / 1000).toFixed(1)} s`);
  return r;
}

const npm = (args: string[], cwd: string) => run('npm', [...args, '--prefer-offline', '--no-audit', '--no-fund'], cwd);
const tsc = (project: string, compiler = 'typescript') => run(process.execPath, [`node_modules/${compiler}/bin/tsc`, '-p', project], app);

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'tessera-consumer-'));
  app = join(work, 'app');
});

afterAll(() => {
  if (work && !process.env.TESSERA_KEEP_CONSUMER) rmSync(work, { recursive: true, force: true });
});

describe.sequential('the packed package in a fresh app', () => {
  it('packs the entry points, both encoder workers and the declarations, and nothing else', async () => {
    const r = timed(
      'npm pack',
      expectSuccess(await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', work], root), 'npm pack'),
    );
    const [info] = JSON.parse(r.stdout) as Array<{ filename: string; files: Array<{ path: string }> }>;
    tarball = join(work, info.filename);
    const files = info.files.map((f) => f.path);
    for (const f of [
      'package.json',
      'README.md',
      'dist/index.js',
      'dist/node.js',
      'dist/cli.js',
      'dist/encoder.worker.js',
      'dist/encoder-worker.js',
      'dist/types/index.d.ts',
      'dist/types/node.d.ts',
      'dist/types/ts5/index.d.ts',
      'dist/types/ts5/node.d.ts',
    ]) {
      expect(files, f).toContain(f);
    }
    expect(files.filter((f) => !f.startsWith('dist/') && f !== 'package.json' && f !== 'README.md')).toEqual([]);
  });

  it('installs into a new Vite app without the Node-only packages (webgpu, sharp)', async () => {
    cpSync(TEMPLATE, app, { recursive: true, filter: (src) => !src.includes(`${TEMPLATE}/node`) });
    cpSync(ERROR_CLASSES, join(app, 'src/error-classes.ts'));
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'tessera-consumer', private: true, type: 'module' }));
    mkdirSync(join(app, 'public/models'), { recursive: true });
    cpSync(join(root, 'public/models/smolvlm-tiny'), join(app, 'public/models/smolvlm-tiny'), { recursive: true });
    cpSync(join(root, 'public/sample.png'), join(app, 'public/sample.png'));
    // TypeScript 5.9 as well: before 6.0 lib.dom has no WebGPU, and the package's "types@<6" entry adds it.
    const deps = [tarball, `vite@${version('vite')}`, `typescript@${version('typescript')}`, `typescript5@npm:typescript@${TS5}`];
    timed('npm install (browser app)', expectSuccess(await npm(['install', ...deps], app), 'npm install'));
    expect(existsSync(join(app, 'node_modules/tessera/dist/encoder.worker.js'))).toBe(true);
    expect(existsSync(join(app, 'node_modules/webgpu'))).toBe(false);
    expect(existsSync(join(app, 'node_modules/sharp'))).toBe(false);
  });

  it('type-checks the app strictly (moduleResolution bundler, skipLibCheck off) with TypeScript 7 and 5.9', async () => {
    for (const compiler of ['typescript', 'typescript5']) {
      const r = timed(`tsc (bundler, ${compiler})`, await tsc('.', compiler));
      expect(r.stdout + r.stderr, compiler).toBe('');
      expect(r.code).toBe(0);
    }
  });

  it("builds with the app's vite build, without warnings, emitting the encoder worker", async () => {
    const r = timed(
      'vite build',
      expectSuccess(await run(process.execPath, ['node_modules/vite/bin/vite.js', 'build'], app), 'vite build'),
    );
    expect(r.stdout + r.stderr).not.toMatch(/warn|\(!\)/i);
    expect(readdirSync(join(app, 'dist/assets')).filter((f) => /^encoder\.worker-.*\.js$/.test(f))).toHaveLength(1);
  });

  /** `queries`: '' is the default options ('auto'), '?device=webgpu' asks for WebGPU. `args`: vite's, or a server. */
  async function answerFrom(args: string[] | (() => Promise<Server>), label: string, queries: readonly string[]): Promise<void> {
    const server = Array.isArray(args) ? await startVite(app, args) : await args();
    try {
      for (const query of queries) {
        // ?json: also a response_format request (XGrammar as the app's bundler built it).
        const outcome = await openApp(`${server.url}${query ? `${query}&json` : '?json'}`);
        console.log(`[consumer] ${label}${query} on ${outcome.backend} (page load to answer): ${(outcome.ms / 1000).toFixed(1)} s`);
        expect(outcome.error, `${JSON.stringify(outcome)}\n${server.output()}`).toBeUndefined();
        expect(outcome.encoderMode).toBe('workers');
        if (query) expect(outcome.backend).toBe('webgpu');
        expect(outcome.tokenIds).toEqual(GOLDEN);
        // The error classes' names in the app's minified bundle (the Next.js page does not list them).
        if (!label.startsWith('Next.js')) expect(outcome.badNames).toEqual([]);
        expect(JSON.parse(outcome.json ?? '')).toMatchObject({ kind: expect.stringMatching(/^(cat|dog)$/) });
      }
    } finally {
      server.stop();
    }
  }

  it('answers in Chromium from the built app (vite preview) with the greedy goldens', async () => {
    // Default options ('auto': the CPU backend over a software adapter such as SwiftShader), and WebGPU asked for.
    await answerFrom(['preview'], 'vite preview + Chromium', ['', '?device=webgpu']);
  });

  it("answers in Chromium from Vite's dev server (dependency pre-bundling on)", async () => {
    await answerFrom([], 'vite dev + Chromium', ['']);
  });

  it('builds with webpack 5 without warnings, emitting the encoder worker, WebAssembly and XGrammar, and answers in Chromium', async () => {
    const deps = ['webpack', 'webpack-cli', 'ts-loader', 'html-webpack-plugin'].map((p) => `${p}@${version(p)}`);
    timed('npm install webpack', expectSuccess(await npm(['install', ...deps], app), 'npm install webpack'));
    cpSync(join(TEMPLATE, 'webpack'), join(app, 'webpack'), { recursive: true });
    const r = timed(
      'webpack build',
      expectSuccess(
        await run(process.execPath, ['node_modules/webpack-cli/bin/cli.js', '--config', 'webpack/webpack.config.mjs'], app),
        'webpack',
      ),
    );
    expect(r.stdout + r.stderr).not.toMatch(/warning|error/i);
    const out = join(app, 'dist-webpack');
    const emitted = readdirSync(out);
    expect(emitted.filter((f) => f.endsWith('.wasm')).length, emitted.join(' ')).toBeGreaterThan(0);
    const texts = emitted.filter((f) => f.endsWith('.js')).map((f) => readFileSync(join(out, f), 'utf8'));
    expect(texts.filter((t) => t.includes('globalThis.xgrammar') || t.includes('xgrammar')).length).toBeGreaterThan(0);
    // The page's checkpoint and image, as the Vite app has them from public/.
    cpSync(join(app, 'public'), out, { recursive: true });
    await answerFrom(['preview', '--outDir', 'dist-webpack'], 'webpack 5 + Chromium', ['', '?device=webgpu']);
  });

  it('builds in a Next.js app (App Router, a client component) without warnings, and the page answers in Chromium', async () => {
    const deps = [`next@${NEXT}`, `react@${REACT}`, `react-dom@${REACT}`];
    timed('npm install next react react-dom', expectSuccess(await npm(['install', ...deps], app), 'npm install next'));
    cpSync(join(TEMPLATE, 'next'), join(app, 'next'), { recursive: true });
    cpSync(join(app, 'public'), join(app, 'next/public'), { recursive: true });
    const env = cleanEnv({ NEXT_TELEMETRY_DISABLED: '1' });
    const r = timed(
      'next build',
      expectSuccess(await run(process.execPath, ['node_modules/next/dist/bin/next', 'build', 'next'], app, env), 'next build'),
    );
    // Next marks a warning with ⚠ (and says "warn"). Under CI=true it also warns that the CI keeps no build
    // cache (its .next/cache between runs): that one is about the CI, not the app, and is left out.
    const output = (r.stdout + r.stderr)
      .split('\n')
      .filter((line) => !line.includes('No build cache found'))
      .join('\n');
    expect(output).not.toMatch(/⚠|warn|error/i);
    await answerFrom(() => startNext(app, 'next'), 'Next.js + Chromium', ['', '?device=webgpu']);
  });
});

describe.sequential('the same install from Node', () => {
  it("type-checks against tessera/node with NodeNext and node16, and without the DOM lib, with TypeScript 7 and 5.9; openai's chat types and the engine's are one; tessera/ai-sdk is an AI SDK model", async () => {
    cpSync(join(TEMPLATE, 'node'), join(app, 'node'), { recursive: true });
    cpSync(ERROR_CLASSES, join(app, 'node/error-classes.ts'));
    // openai: node/openai-types.ts checks that openai's request and response types and the engine's are one;
    // ai: node/ai-sdk-types.ts that tessera/ai-sdk is a model the AI SDK's functions take. @ai-sdk/provider's
    // declarations import 'json-schema' without depending on its types: @types/json-schema, as its users add it.
    // The `ai` package's own declarations name lib.dom's types (HeadersInit, RequestCredentials), so
    // node/tsconfig.nodom.json leaves ai-sdk-types.ts out.
    timed(
      'npm install @types/node openai ai @ai-sdk/provider @types/json-schema',
      expectSuccess(
        await npm(
          [
            'install',
            `@types/node@${version('@types/node')}`,
            `openai@${version('openai')}`,
            `ai@${version('ai')}`,
            `@ai-sdk/provider@${version('@ai-sdk/provider')}`,
            `@types/json-schema@${version('@types/json-schema')}`,
          ],
          app,
        ),
        'npm install',
      ),
    );
    // node/tsconfig.nodom.json: lib ES2022 only, as a Node project has it (the declarations name browser
    // globals; the package declares them as empty interfaces where lib.dom is absent). TypeScript 5.9 takes
    // the "types@<6" entry, which must not pull in @webgpu/types there (it needs lib.dom).
    // Two chains at once (each tsc is one thread): the two that emit node/out/ (the next tests run its
    // main.js) one after the other, TypeScript 5.9's last, and the four noEmit checks beside them.
    const check = async (project: string, compiler: string) => {
      const r = timed(`tsc -p ${project} (${compiler})`, await tsc(project, compiler));
      expect(r.stdout + r.stderr, `${project} (${compiler})`).toBe('');
      expect(r.code).toBe(0);
    };
    const chain = async (runs: Array<[string, string]>) => {
      for (const [project, compiler] of runs) await check(project, compiler);
    };
    await Promise.all([
      chain([
        ['node', 'typescript'],
        ['node', 'typescript5'],
      ]),
      chain([
        ['node/tsconfig.node16.json', 'typescript'],
        ['node/tsconfig.nodom.json', 'typescript'],
        ['node/tsconfig.node16.json', 'typescript5'],
        ['node/tsconfig.nodom.json', 'typescript5'],
      ]),
    ]);
  });

  it("fails with MissingDependencyError while the optional peer 'webgpu' is not installed", async () => {
    const r = await run(process.execPath, ['node/out/main.js', 'public/models/smolvlm-tiny', 'public/sample.png', '1'], app);
    expect(JSON.parse(r.stdout).error).toMatchObject({ name: 'MissingDependencyError', code: 'MISSING_DEPENDENCY' });
    expect(r.stdout).toMatch(/npm install webgpu/);
    timed(
      'npm install webgpu sharp',
      expectSuccess(await npm(['install', `webgpu@${version('webgpu')}`, `sharp@${version('sharp')}`], app), 'npm install'),
    );
  });

  it('answers with encoder worker threads, and the process exits by itself after destroy()', async () => {
    // XDG_RUNTIME_DIR unset, as on a headless machine: the library keeps Dawn's wayland warning away.
    const env = cleanEnv({ XDG_RUNTIME_DIR: undefined });
    const args = ['node/out/main.js', 'public/models/smolvlm-tiny', 'public/sample.png', String(NODE_MAX_TOKENS)];
    const r = timed('node program (start to exit)', await runExpectingExit(args, app, env, 20_000, 240_000));
    console.log(`[consumer] node program, answer printed to exit: ${r.exitAfterOutputMs?.toFixed(0)} ms`);
    expect(r.exitAfterOutputMs, `still running 20 s after destroy():\n${r.stdout}\n${r.stderr}`).toBeDefined();
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.encoderMode).toBe('workers');
    expect(out.tokenIds).toEqual(GOLDEN.slice(0, NODE_MAX_TOKENS));
    expect(out.badNames).toEqual([]);
    expect(JSON.parse(out.json)).toMatchObject({ kind: expect.stringMatching(/^(cat|dog)$/) });
    expect(r.stderr).not.toMatch(/XDG_RUNTIME_DIR/);
  });

  it('runs the installed tessera command: usage errors, and named errors from a worker without a stack', async () => {
    const tessera = (args: string[]) => run(join(app, 'node_modules/.bin/tessera'), args, app);
    const bad = await tessera(['run', '--model', 'public/models/smolvlm-tiny', '--prompt', 'hi', '--max-tokens', '-5']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^tessera: --max-tokens must be an integer >= 1, got '-5'\n\nusage: tessera/);
    const unknown = await tessera(['run', '--frobnicate']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/^tessera: Unknown option '--frobnicate'/);

    writeFileSync(join(app, 'empty.png'), '');
    const empty = timed(
      'tessera run (0-byte image)',
      await tessera(['run', '--model', 'public/models/smolvlm-tiny', '--prompt', 'hi', '--image', 'empty.png']),
    );
    expect(empty.code).toBe(1);
    expect(empty.stderr).toMatch(/^tessera: ImageDecodeError: image has 0 bytes; .*$/m);
    expect(empty.stderr).not.toMatch(/^\s+at /m);
    const verbose = await tessera(['run', '--model', 'public/models/smolvlm-tiny', '--prompt', 'hi', '--image', 'empty.png', '--verbose']);
    expect(verbose.stderr).toMatch(/^ImageDecodeError: image has 0 bytes.*\n\s+at /m);
  });
});

describe.sequential('the same install from Deno', () => {
  it("answers in Deno (npm's deno) on the device it chooses and on Deno's own WebGPU, and exits by itself", async () => {
    timed('npm install deno', expectSuccess(await npm(['install', `deno@${version('deno')}`], app), 'npm install deno'));
    cpSync(join(TEMPLATE, 'deno'), join(app, 'deno'), { recursive: true });
    // Deno's WebGPU (wgpu) finds SwiftShader's Vulkan driver where Chromium's is installed (docs/testing.md).
    const icd = '/usr/lib/chromium/vk_swiftshader_icd.json';
    const env = cleanEnv({ VK_ICD_FILENAMES: process.env.VK_ICD_FILENAMES ?? (existsSync(icd) ? icd : undefined), NO_COLOR: '1' });
    const args = ['run', '-A', '--unstable-webgpu', 'deno/main.ts', 'public/models/smolvlm-tiny', String(DENO_MAX_TOKENS)];
    const r = timed(
      'deno program (start to exit)',
      await runExpectingExit(args, app, env, 20_000, 300_000, join(app, 'node_modules/.bin/deno')),
    );
    expect(r.exitAfterOutputMs, `still running 20 s after destroy():\n${r.stdout}\n${r.stderr}`).toBeDefined();
    expect(r.code, r.stdout + r.stderr).toBe(0);
    type Answer = ScoredAnswer & { backend: string; encoderMode: string; error?: { name: string; message: string } };
    const out = JSON.parse(r.stdout) as { default: Answer; webgpu: Answer };
    console.log(
      `[consumer] deno: default device ${out.default.backend ?? out.default.error?.name}, webgpu ${out.webgpu.backend ?? out.webgpu.error?.name}`,
    );
    // The device the engine chooses: WebGPU on a hardware adapter, else the CPU backend (encoding in-process there).
    expect(out.default.error, JSON.stringify(out.default.error)).toBeUndefined();
    expect(['webgpu', 'wasm']).toContain(out.default.backend);
    if (out.default.backend === 'wasm') expect(out.default.encoderMode).toBe('in-process');
    expect(out.default.tokenIds.length).toBeGreaterThan(0);
    // Deno's WebGPU asked for: an answer on it, or (no adapter at all) the named error.
    if (out.webgpu.error) {
      expect(out.webgpu.error.name, out.webgpu.error.message).toBe('WebGpuUnavailableError');
      return;
    }
    expect(out.webgpu.backend).toBe('webgpu');
    expect(out.webgpu.encoderMode).toBe('workers');
    // Two backends on one checkpoint: the same answer up to a near-tie (test/helpers/batch-agreement.ts).
    expect(batchAgreement(out.default, out.webgpu, false).problems).toEqual([]);
  });
});

describe.sequential("Vite 7's dev server (pre-bundling breaks worker URLs in dependencies)", () => {
  it('reports EncoderWorkerLoadError (WebGPU) and OnnxRuntimeLoadError (WebAssembly) naming the fix; with the documented optimizeDeps.exclude both answer', async () => {
    timed('npm install vite@7', expectSuccess(await npm(['install', 'vite@7'], app), 'npm install vite@7'));
    const plain = await startVite(app, []);
    try {
      const failed = await openApp(`${plain.url}?device=webgpu`);
      expect(failed.error?.name, JSON.stringify(failed)).toBe('EncoderWorkerLoadError');
      expect(failed.error?.message).toContain(`${plain.url}node_modules/.vite/deps/encoder.worker.js`);
      expect(failed.error?.message).toContain("optimizeDeps: { exclude: ['tessera', 'onnxruntime-web'] }");
      const wasm = await openApp(`${plain.url}?device=wasm`);
      expect(wasm.error?.name, JSON.stringify(wasm)).toBe('OnnxRuntimeLoadError');
      expect(wasm.error?.message).toContain("optimizeDeps: { exclude: ['tessera', 'onnxruntime-web'] }");
    } finally {
      plain.stop();
    }
    writeFileSync(join(app, 'vite.config.js'), "export default { optimizeDeps: { exclude: ['tessera', 'onnxruntime-web'] } };\n");
    rmSync(join(app, 'node_modules/.vite'), { recursive: true, force: true });
    const fixed = await startVite(app, []);
    try {
      for (const device of ['webgpu', 'wasm']) {
        const outcome = await openApp(`${fixed.url}?device=${device}`);
        console.log(`[consumer] vite 7 dev with optimizeDeps.exclude + Chromium, ${device}: ${(outcome.ms / 1000).toFixed(1)} s`);
        expect(outcome.error, JSON.stringify(outcome)).toBeUndefined();
        expect(outcome.backend).toBe(device);
        expect(outcome.tokenIds).toEqual(GOLDEN);
      }
    } finally {
      fixed.stop();
    }
  });
});
