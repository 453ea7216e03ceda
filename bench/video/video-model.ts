// The checkpoint `npm run bench:video` runs: the SmolVLM2-256M-Video shape with RANDOM weights. SmolVLM2-256M
// has the SmolVLM-256M architecture (SigLIP 768 x 12 at 512 px, scale factor 4: 64 tokens per frame; text
// 576 x 30), so the weights are the bench model's (scripts/make-bench-model.ts, linked, not copied) and the
// processor files are SmolVLM2's (test/fixtures/models/SmolVLM2-500M-Video-Instruct: tokenizer, chat template,
// preprocessor_config.json with video_sampling fps 1 / max_frames 64 and size 2048, as upstream). config.json is
// SmolVLM-256M's with model_type smolvlm. Output: .cache/bench-models/smolvlm2-256m-video-random/ (git-ignored).

import { copyFileSync, existsSync, linkSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { BENCH_MODEL_DIR, ensureBenchModel } from '../../scripts/make-bench-model';
import { writeJson } from '../../scripts/tiny-weights';

const root = join(import.meta.dirname, '../..');
const SMOLVLM2 = join(root, 'test/fixtures/models/SmolVLM2-500M-Video-Instruct');
export const VIDEO_BENCH_MODEL_DIR = join(root, '.cache/bench-models/smolvlm2-256m-video-random');

export async function ensureVideoBenchModel(log: (line: string) => void): Promise<void> {
  await ensureBenchModel(log);
  const dir = VIDEO_BENCH_MODEL_DIR;
  mkdirSync(dir, { recursive: true });
  for (const f of [
    'tokenizer.json',
    'tokenizer_config.json',
    'special_tokens_map.json',
    'added_tokens.json',
    'generation_config.json',
    'chat_template.json',
    'processor_config.json',
    'preprocessor_config.json',
  ]) {
    copyFileSync(join(SMOLVLM2, f), join(dir, f));
  }
  const config = JSON.parse(readFileSync(join(BENCH_MODEL_DIR, 'config.json'), 'utf8'));
  config.model_type = 'smolvlm';
  config._tessera = 'SmolVLM-256M shape (= SmolVLM2-256M) with random weights, for npm run bench:video. Not a trained model.';
  writeJson(join(dir, 'config.json'), config);
  const weights = join(dir, 'model.safetensors');
  if (existsSync(weights)) rmSync(weights);
  linkSync(join(BENCH_MODEL_DIR, 'model.safetensors'), weights);
  log(`video bench model: ${dir} (SmolVLM2 processor files, SmolVLM-256M-shaped random weights)`);
}
