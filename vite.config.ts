// One Vite config for the three builds and the tests:
//   vite / vite build            the demo app (root demo/, static files from public/) -> demo-dist/
//   vite build --mode lib        the npm package + CLI (src/index.ts, src/node.ts, src/cli/tessera.ts) -> dist/
//   vitest                       test/unit (Node, no GPU) and test/gpu (Dawn in Node, one file at a time)
// WGSL files are imported with `?raw`, so the same shader text runs in all three.

import { readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { resolve } from 'node:path';
import { defineConfig } from 'vitest/config';

const root = import.meta.dirname;

const nodeExternals = [...builtinModules, ...builtinModules.map((m) => `node:${m}`)];
// The package's own dependencies stay imports (users install them), never bundled copies.
const dependencies = Object.keys(JSON.parse(readFileSync(resolve(root, 'package.json'), 'utf8')).dependencies ?? {});
const dependencyPattern = new RegExp(`^(${dependencies.map((d) => d.replace(/[/.]/g, '\\$&')).join('|')})(/.*)?$`);

export default defineConfig(({ mode }) => ({
  root: mode === 'lib' ? root : resolve(root, 'demo'),
  // Multi-page, no SPA fallback: a missing model file must be a 404, not index.html with status 200.
  appType: 'mpa',
  // The demo serves public/ (sample image, tiny models); the package must not ship it.
  publicDir: mode === 'lib' ? false : resolve(root, 'public'),
  server: { fs: { allow: [root] } },
  build:
    mode === 'lib'
      ? {
          outDir: resolve(root, 'dist'),
          emptyOutDir: true,
          target: 'es2022',
          sourcemap: true,
          lib: {
            entry: {
              index: resolve(root, 'src/index.ts'),
              node: resolve(root, 'src/node.ts'),
              cli: resolve(root, 'src/cli/tessera.ts'),
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
              parity: resolve(root, 'demo/parity.html'),
              'encoder-harness': resolve(root, 'demo/encoder-harness.html'),
            },
          },
        },
  test: {
    root,
    projects: [
      {
        extends: true,
        test: { name: 'unit', include: ['test/unit/**/*.test.ts'], environment: 'node' },
      },
      {
        extends: true,
        test: {
          name: 'gpu',
          include: ['test/gpu/**/*.test.ts'],
          globalSetup: ['test/gpu/global-setup.ts'],
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
    ],
  },
}));
