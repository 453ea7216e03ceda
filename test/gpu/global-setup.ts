// Builds the package once before the GPU tests: the Node encoder worker runs dist/encoder-worker.js
// (worker threads cannot load `?raw` WGSL imports from source; the build inlines them).

import { build } from 'vite';

export default async function setup(): Promise<void> {
  await build({ mode: 'lib', logLevel: 'warn', configFile: new URL('../../vite.config.ts', import.meta.url).pathname });
}
