// Before the browser tests: the tiny checkpoints and public/models/index.json (the demo's model list)
// exist, also when `playwright test` runs without `npm test` having made them first.

import { ensureTinyModels } from '../helpers/tiny-models';

export default function setup(): void {
  ensureTinyModels();
}
