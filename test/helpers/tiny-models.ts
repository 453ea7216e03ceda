// The tiny random-weight checkpoints tests run on, generated on demand (deterministic, git-ignored).

import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { makeTiny } from '../../scripts/make-tiny';

export const TINY_DIR = resolve(import.meta.dirname, '../../public/models');

/** Make public/models/{smolvlm-tiny, smolvlm-tiny-tied, smolvlm2-video-tiny} if missing; returns their parent directory. */
export function ensureTinyModels(): string {
  if (!existsSync(resolve(TINY_DIR, 'manifest.json')) || !existsSync(resolve(TINY_DIR, 'smolvlm2-video-tiny/model.safetensors'))) makeTiny(TINY_DIR);
  return TINY_DIR;
}
