// The tiny SmolVLM2-shaped video checkpoint for `npm run make:tiny`, kept apart from
// make-tiny.ts's image checkpoints so each entry can change on its own. Like them: deterministic random
// weights (RANDOM: its answers are noise), the real SmolVLM2-500M-Video-Instruct config schema, tokenizer,
// chat template and processor files (test/fixtures/models/SmolVLM2-500M-Video-Instruct), reduced sizes:
//
//   smolvlm2-video-tiny/  model_type smolvlm, separate lm_head, BF16, one model.safetensors, chat_template.json,
//                         frames of 128 px -> 16 <image> tokens each (pixel shuffle 2), video_sampling
//                         fps 1 / max_frames 8 (so "longer than max_frames" clips stay short), size 256.

import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeSafetensors } from '../src/model/weights/safetensors-writer';
import { sha256, tensorsFor, tinyConfig, writeJson, TINY } from './tiny-weights';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const REAL = join(root, 'test/fixtures/models/SmolVLM2-500M-Video-Instruct');
const FILES = [
  'tokenizer.json',
  'tokenizer_config.json',
  'special_tokens_map.json',
  'added_tokens.json',
  'generation_config.json',
  'chat_template.json',
];

export const TINY_VIDEO = {
  name: 'smolvlm2-video-tiny',
  /** Frames: longest edge 256 first (the HF "size" override of video_size), then 128 x 128. */
  size: 256,
  videoSampling: { fps: 1, max_frames: 8, video_size: { longest_edge: 128 } },
};

export function makeTinyVideo(outDir: string): Record<string, string> {
  const dir = join(outDir, TINY_VIDEO.name);
  mkdirSync(dir, { recursive: true });
  const base = JSON.parse(readFileSync(join(REAL, 'config.json'), 'utf8'));
  const config = tinyConfig(base, 'smolvlm', false);
  writeJson(join(dir, 'config.json'), config);
  for (const f of FILES) copyFileSync(join(REAL, f), join(dir, f));
  const pre = JSON.parse(readFileSync(join(REAL, 'preprocessor_config.json'), 'utf8'));
  pre.max_image_size = { longest_edge: TINY.max_image_size };
  pre.size = { longest_edge: TINY_VIDEO.size };
  pre.video_sampling = TINY_VIDEO.videoSampling;
  writeJson(join(dir, 'preprocessor_config.json'), pre);
  const patches = TINY.vision.image_size / TINY.vision.patch_size;
  writeJson(join(dir, 'processor_config.json'), { image_seq_len: (patches / TINY.scale_factor) ** 2, processor_class: 'SmolVLMProcessor' });
  const bytes = writeSafetensors(tensorsFor(config, 'BF16'), { format: 'pt' });
  writeFileSync(join(dir, 'model.safetensors'), bytes);
  writeFileSync(
    join(dir, 'README.md'),
    `# ${TINY_VIDEO.name}\n\nRandom weights at reduced sizes, made by \`npm run make:tiny\` from the real SmolVLM2-500M-Video-Instruct\n` +
      'config schema, tokenizer, chat template and processor files. **Not a trained model: its answers are noise.**\n\n' +
      'model_type smolvlm, separate lm_head, BF16; video frames of 128 px (16 tokens each), video_sampling fps 1, max_frames 8.\n',
  );
  return { 'model.safetensors': sha256(bytes) };
}
