// Builds the package once before the GPU tests: the Node encoder worker runs dist/encoder-worker.js
// (worker threads cannot load `?raw` WGSL imports from source; the build inlines them). Then the test-only
// worker entry (test/helpers/faulty-encoder.node-worker.ts) with the same config, so it is bundled and
// minified exactly like the shipped worker, into dist-test/ (never part of the package).

import { resolve } from 'node:path';
import { build } from 'vite';

const root = resolve(import.meta.dirname, '../..');

export default async function setup(): Promise<void> {
  const configFile = resolve(root, 'vite.config.ts');
  await build({ mode: 'lib', logLevel: 'warn', configFile });
  await build({
    mode: 'lib',
    logLevel: 'warn',
    configFile,
    build: {
      outDir: resolve(root, 'dist-test'),
      emptyOutDir: true,
      lib: { entry: { 'faulty-encoder-worker': resolve(root, 'test/helpers/faulty-encoder.node-worker.ts') }, formats: ['es'] },
    },
  });
}
