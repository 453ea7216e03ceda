// One Vite config for the three builds and the tests:
//   vite / vite build            the demo app (root demo/, static files from public/) -> demo-dist/
//   vite build --mode lib        the npm package + CLI (src/index.ts, src/node.ts, src/cli/tessera.ts, the two
//                                encoder workers) -> dist/; declarations come from `npm run build`
//   vitest                       test/unit (Node, no GPU), test/gpu (Dawn in Node, one file at a time) and
//                                test/consumer (the packed package in a generated app; npm run test:consumer)
// WGSL files are imported with `?raw`, so the same shader text runs in all three.

import { chmodSync, existsSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { defineConfig } from 'vitest/config';
import type { Plugin } from 'vite';
import { wgslWithoutComments } from './scripts/wgsl-without-comments.ts';

const root = import.meta.dirname;

const nodeExternals = [...builtinModules, ...builtinModules.map((m) => `node:${m}`)];
// The package's own dependencies stay imports (users install them), never bundled copies.
const manifest = JSON.parse(readFileSync(resolve(root, 'package.json'), 'utf8'));
const dependencies = [...Object.keys(manifest.dependencies ?? {}), ...Object.keys(manifest.peerDependencies ?? {})];
const dependencyPattern = new RegExp(`^(${dependencies.map((d) => d.replace(/[/.]/g, '\\$&')).join('|')})(/.*)?$`);

// Vite plugin for the package build (vite build --mode lib): the browser encoder worker becomes its own
// file, dist/encoder.worker.js, and the code that starts it refers to it as
//   new Worker(new URL("./encoder.worker.js", import.meta.url), { type: "module", ... })
// which the APP's bundler recognises (it bundles the worker and rewrites the URL).
//
// Vite's own worker handling would instead bundle the worker into dist/assets/encoder.worker-<hash>.js and
// write `new URL(/* @vite-ignore */ "/assets/encoder.worker-<hash>.js", "" + import.meta.url)`: an absolute
// path that no app bundler follows (issue 9). So, in src/encoder/spawn-browser.ts only:
//   transform (before Vite's worker plugin): the source path becomes './encoder.worker.js', and the
//     `new URL(` of the worker gets a /* @vite-ignore */ so neither Vite's worker nor its asset plugin
//     touches it;
//   renderChunk: that comment is removed again, leaving the plain pattern above.
// generateBundle checks the result: the pattern exactly once, in a chunk at the root of dist/ beside
// encoder.worker.js (so the relative URL holds). The lib build is not minified, so renderChunk's text is
// what ships.

const SOURCE_PATH = '../../workers/encoder.worker.ts';
const PACKAGE_FILE = 'encoder.worker.js';
const SPAWNER = /src\/encoder\/spawn-browser\.ts$/;
const IGNORED = `new URL(/* @vite-ignore */ './${PACKAGE_FILE}', import.meta.url)`;
const FINAL = /new Worker\(new URL\(["']\.\/encoder\.worker\.js["'], import\.meta\.url\)/g;

function packageEncoderWorker(): Plugin {
  return {
    name: 'tessera:package-encoder-worker',
    enforce: 'pre',
    transform(code, id) {
      if (!SPAWNER.test(id)) return null;
      const worker = `new URL('${SOURCE_PATH}', import.meta.url)`;
      if (!code.includes(worker)) this.error(`${id} no longer contains ${worker}; update packageEncoderWorker in vite.config.ts`);
      return { code: code.replace(worker, IGNORED).replaceAll(`'${SOURCE_PATH}'`, `'./${PACKAGE_FILE}'`), map: null };
    },
    renderChunk(code) {
      if (!code.includes('@vite-ignore')) return null;
      return { code: code.replace(/new URL\(\s*\/\* @vite-ignore \*\/\s*(["']\.\/encoder\.worker\.js["'])/g, 'new URL($1'), map: null };
    },
    generateBundle(_options, bundle) {
      const files = Object.values(bundle);
      const hits = files.flatMap((f) => (f.type === 'chunk' ? [...f.code.matchAll(FINAL)].map(() => f.fileName) : []));
      if (hits.length !== 1 || hits[0].includes('/')) {
        this.error(
          `expected one 'new Worker(new URL("./${PACKAGE_FILE}", import.meta.url)' in a chunk at dist/'s root, found: ${JSON.stringify(hits)}`,
        );
      }
      if (!files.some((f) => f.fileName === PACKAGE_FILE)) this.error(`${PACKAGE_FILE} is missing from the package build`);
    },
  };
}

// Vite plugin for the package build: XGrammar (response_format's grammar engine) ships as dist/xgrammar.js,
// a copy of @mlc-ai/web-xgrammar's lib/index.js, and src/grammar/load-xgrammar.ts imports it as
//   import(new URL("./xgrammar.js", import.meta.url).href)
// so that an app's bundler copies it as an asset instead of making it a chunk: the file is 1.1 MB of
// JavaScript with its WebAssembly inlined, and as a chunk every app's build would warn that a chunk is
// larger than 500 kB. Evaluated as an ES module it puts its API on globalThis.xgrammar (load-xgrammar.ts).
// In development and the tests the bare import stays (Vite and Node resolve it from node_modules).
const XGRAMMAR_FILE = 'xgrammar.js';
const XGRAMMAR_LOADER = /src\/grammar\/load-xgrammar\.ts$/;
const XGRAMMAR_IMPORT = "import('@mlc-ai/web-xgrammar')";

function packageXGrammar(): Plugin {
  return {
    name: 'tessera:package-xgrammar',
    enforce: 'pre',
    transform(code, id) {
      if (!XGRAMMAR_LOADER.test(id)) return null;
      if (!code.includes(XGRAMMAR_IMPORT))
        this.error(`${id} no longer contains ${XGRAMMAR_IMPORT}; update packageXGrammar in vite.config.ts`);
      const url = `new URL(/* @vite-ignore */ './${XGRAMMAR_FILE}', import.meta.url)`;
      // webpackIgnore: webpack 5 copies the file as an asset (the `new URL`) and leaves the import to the
      // browser, as Vite does; without it webpack warns of an import it cannot resolve and fails it at run time.
      return { code: code.replace(XGRAMMAR_IMPORT, `import(/* webpackIgnore: true */ /* @vite-ignore */ ${url}.href)`), map: null };
    },
    renderChunk(code) {
      if (!code.includes(XGRAMMAR_FILE)) return null;
      return { code: code.replace(/new URL\(\s*\/\* @vite-ignore \*\/\s*(["']\.\/xgrammar\.js["'])/g, 'new URL($1'), map: null };
    },
    generateBundle(_options, bundle) {
      const hits = Object.values(bundle).filter(
        (f) => f.type === 'chunk' && f.code.includes(`new URL("./${XGRAMMAR_FILE}", import.meta.url)`),
      );
      if (hits.length !== 1 || hits[0].fileName.includes('/')) {
        this.error(
          `expected one 'new URL("./${XGRAMMAR_FILE}", import.meta.url)' in a chunk at dist/'s root, found ${hits.map((h) => h.fileName).join(', ') || 'none'}`,
        );
      }
      this.emitFile({
        type: 'asset',
        fileName: XGRAMMAR_FILE,
        source: readFileSync(resolve(root, 'node_modules/@mlc-ai/web-xgrammar/lib/index.js'), 'utf8'),
      });
    },
  };
}

// WGSL without its comments in the package build (vite build --mode lib): the shaders travel as strings
// inside dist/ and then inside every app's bundle, where comments are about 40% of their bytes (the app's
// minifier cannot touch a string). Blank lines go too; the code is unchanged. Development, the tests and
// the demo keep the commented source, so a compile error there points at the file's own lines.
function stripWgslComments(): Plugin {
  return {
    name: 'tessera-wgsl-without-comments',
    enforce: 'pre',
    load(id) {
      if (!id.endsWith('.wgsl?raw')) return null;
      const source = readFileSync(id.slice(0, -'?raw'.length), 'utf8');
      return `export default ${JSON.stringify(wgslWithoutComments(source))};`;
    },
  };
}

// The browser tests' harness pages (test/e2e/pages/*.html) are served by the dev server at /<name>.html
// and never built into the demo: the demo build ships the pages users open. A page's `%PAGES%` is the
// folder's /@fs/ URL, so its script (test/e2e/pages/<name>.ts) goes through Vite like the demo's.
const TEST_PAGES = resolve(root, 'test/e2e/pages');

function serveTestPages(): Plugin {
  return {
    name: 'tessera-test-pages',
    apply: 'serve',
    configureServer(server) {
      server.middlewares.use((req, res, next) => {
        // Scripts and workers say they may be embedded by a cross-origin isolated page (COEP require-corp),
        // as a worker's script must under COEP; a document only becomes isolated with ?isolated below.
        if (req.headers['sec-fetch-dest'] !== 'document') {
          res.setHeader('Cross-Origin-Embedder-Policy', 'require-corp');
          res.setHeader('Cross-Origin-Resource-Policy', 'cross-origin');
        }
        next();
      });
      server.middlewares.use(async (req, res, next) => {
        const name = /^\/([a-z0-9-]+)\.html(?:\?.*)?$/.exec(req.url ?? '')?.[1];
        const file = name && resolve(TEST_PAGES, `${name}.html`);
        if (!file || !existsSync(file)) return next();
        try {
          const html = readFileSync(file, 'utf8').replaceAll('%PAGES%', `/@fs${TEST_PAGES}`);
          res.setHeader('Content-Type', 'text/html');
          // ?isolated: the page is cross-origin isolated (the headers SharedArrayBuffer, and so
          // onnxruntime-web's WebAssembly threads, need); its scripts and workers are same-origin.
          if (new URL(req.url ?? '/', 'http://x').searchParams.has('isolated')) {
            res.setHeader('Cross-Origin-Opener-Policy', 'same-origin');
            res.setHeader('Cross-Origin-Embedder-Policy', 'require-corp');
          }
          res.end(await server.transformIndexHtml(req.url ?? '/', html));
        } catch (e) {
          next(e);
        }
      });
    },
  };
}

// Vite plugin for the package build: dist/cli.js (the package's bin) gets its execute bit, so `npx tessera`
// runs in a clone after the build as it does from an installed tarball (npm sets the bit on install; a
// build does not).
function executableCli(): Plugin {
  return {
    name: 'tessera:executable-cli',
    writeBundle(options, bundle) {
      // The package build writes cli.js; other lib-mode builds (the tests' worker entries) do not.
      if (bundle['cli.js']) chmodSync(resolve(options.dir ?? resolve(root, 'dist'), 'cli.js'), 0o755);
    },
  };
}

// The unit, cpu and consumer projects run after the gpu project (which keeps its one worker, below), two
// or more files at a time: the gpu worker's SwiftShader keeps both cores of a 2-core machine busy, but
// these files mostly run one thread (Node, tsc, npm, a Chromium page on WebAssembly) or wait on a child
// process, and serially they were 170 s of the run (unit 39, cpu 38, consumer 92). Vitest runs projects
// with different maxWorkers only in separate groups (sequence.groupOrder), one group after the other.
const besideEachOther = { maxWorkers: Math.max(2, availableParallelism() - 1), sequence: { groupOrder: 1 } };

export default defineConfig(({ mode }) => ({
  root: mode === 'lib' ? root : resolve(root, 'demo'),
  // Multi-page, no SPA fallback: a missing model file must be a 404, not index.html with status 200.
  appType: 'mpa',
  // The demo serves public/ (sample image, tiny models); the package must not ship it.
  publicDir: mode === 'lib' ? false : resolve(root, 'public'),
  server: { fs: { allow: [root] } },
  // Pre-bundled at start: found only when a request asks for response_format, or a test page imports them
  // (the AI SDK; the remote engine's SSE parser), they would otherwise make the dev server optimize them then
  // and reload every open page mid-test (measured: the remote-engine and device-loss specs, side by side).
  optimizeDeps: { include: ['@mlc-ai/web-xgrammar', 'ai', 'eventsource-parser/stream'] },
  plugins: mode === 'lib' ? [packageEncoderWorker(), packageXGrammar(), stripWgslComments(), executableCli()] : [serveTestPages()],
  build:
    mode === 'lib'
      ? {
          outDir: resolve(root, 'dist'),
          emptyOutDir: true,
          target: 'es2022',
          sourcemap: true,
          // Not minified: the app's bundler minifies (and error classes state their names for that), the
          // worker reference must stay in the form app bundlers recognise, and stack traces stay readable.
          minify: false,
          lib: {
            entry: {
              index: resolve(root, 'src/index.ts'),
              node: resolve(root, 'src/node.ts'),
              cli: resolve(root, 'src/cli/tessera.ts'),
              // tessera/ai-sdk: the AI SDK language model (no runtime dependency; @ai-sdk/provider's types only).
              'ai-sdk': resolve(root, 'src/ai-sdk/index.ts'),
              // Browser: referenced from spawn-browser.ts as new URL('./encoder.worker.js', import.meta.url).
              'encoder.worker': resolve(root, 'workers/encoder.worker.ts'),
              // Node: worker_threads script, found by create-node.ts next to itself.
              'encoder-worker': resolve(root, 'workers/encoder.node-worker.ts'),
            },
            formats: ['es'],
          },
          rollupOptions: {
            external: [...nodeExternals, dependencyPattern],
          },
        }
      : {
          outDir: resolve(root, 'demo-dist'),
          emptyOutDir: true,
          target: 'es2022',
          rollupOptions: {
            input: {
              main: resolve(root, 'demo/index.html'),
            },
          },
        },
  test: {
    root,
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          environment: 'node',
          ...besideEachOther,
          // Beside the consumer and cpu files, a file that takes 3 s alone (tekken-tokenizer) passed
          // Vitest's default 5 s on a loaded 2-core machine. A time limit, not an assertion.
          testTimeout: 60_000,
        },
      },
      {
        extends: true,
        test: {
          name: 'gpu',
          include: ['test/gpu/**/*.test.ts'],
          globalSetup: ['test/gpu/global-setup.ts'],
          setupFiles: ['test/helpers/stall-watchdog.ts'],
          environment: 'node',
          // One Dawn device at a time (SwiftShader already uses every core), shared by every file:
          // no isolation, so test/gpu/gpu.ts and its compiled pipelines live for the whole run.
          pool: 'forks',
          fileParallelism: false,
          isolate: false,
          testTimeout: 120_000,
          hookTimeout: 60_000,
        },
      },
      {
        extends: true,
        // The CPU backend on onnxruntime-node, over the tiny checkpoints' ONNX exports (make-tiny-onnx.ts).
        test: {
          name: 'cpu',
          include: ['test/cpu/**/*.test.ts'],
          setupFiles: ['test/helpers/stall-watchdog.ts'],
          environment: 'node',
          ...besideEachOther,
          testTimeout: 120_000,
          hookTimeout: 60_000,
        },
      },
      {
        extends: true,
        // The packed package in a fresh Vite app and a Node program (test/consumer/consumer.test.ts).
        test: {
          name: 'consumer',
          include: ['test/consumer/**/*.test.ts'],
          globalSetup: ['test/consumer/global-setup.ts'],
          environment: 'node',
          ...besideEachOther,
          testTimeout: 600_000,
          hookTimeout: 120_000,
        },
      },
    ],
  },
}));
