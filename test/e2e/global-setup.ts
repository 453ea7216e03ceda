// Before the browser tests: the tiny checkpoints and public/models/index.json (the demo's model list)
// exist, also when `playwright test` runs without `npm test` having made them first; and the package is
// built (dist/cli.js: remote-engine.spec.ts runs tessera serve as users run it).

import { resolve } from 'node:path';
import { build } from 'vite';
import { ensureTinyModels } from '../helpers/tiny-models';

export default async function setup(): Promise<void> {
  ensureTinyModels();
  const root = resolve(import.meta.dirname, '../..');
  await build({ mode: 'lib', logLevel: 'warn', configFile: resolve(root, 'vite.config.ts') });
}
