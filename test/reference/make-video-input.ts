// Writes the input of the 4-frame video golden (make_video_goldens.py): four deterministic 96 x 60 RGB frames
// (test/fixtures/goldens/tiny-video-frames.u8.bin, [4, 60, 96, 3]) and the prompt token ids
// (tiny-video-input.json). Python has no tokenizer here, so the ids are the reference prompt text of the
// case "tiny: 4 s at 5 fps" in video-reference.json (made by video_reference.py: HF's template, num2words,
// timedelta) tokenized by transformers.js. The frames stand for that clip's sampled frames 0, 6, 12 and 19
// (timestamps 0, 1.2, 2.4, 3.8 s of a 4 s clip), so Tessera is asked with
//   { frames: [{ image: frame k, timestamp }], duration: 4 }.
//
// Run: /usr/bin/python3 test/reference/video_reference.py && npx tsx test/reference/make-video-input.ts

import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AutoTokenizer, env } from '@huggingface/transformers';

const root = resolve(fileURLToPath(import.meta.url), '../../..');
export const VIDEO_GOLDEN = {
  width: 96,
  height: 60,
  timestamps: [0, 1.2, 2.4, 3.8],
  duration: 4,
  caseName: 'tiny: 4 s at 5 fps',
  prompt: 'What happens in this video?',
};

/** Frame k: gradients that move with k, a disc that travels, stripes; distinct and smooth enough to resize. */
export function videoGoldenFrame(k: number): Uint8Array {
  const { width: W, height: H } = VIDEO_GOLDEN;
  const out = new Uint8Array(W * H * 3);
  const cx = 16 + k * 20;
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      const o = (y * W + x) * 3;
      const disc = (x - cx) ** 2 + (y - 30) ** 2 < 14 ** 2;
      out[o] = Math.min(255, Math.round(((x * 255) / (W - 1)) * (k % 2 ? 1 : 0.5) + k * 20));
      out[o + 1] = disc ? 240 - k * 30 : Math.round((y * 255) / (H - 1));
      out[o + 2] = Math.floor((x + k * 3) / 6) % 2 ? 200 : 30 + k * 10;
    }
  }
  return out;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const ref = JSON.parse(readFileSync(join(root, 'test/fixtures/goldens/video-reference.json'), 'utf8'));
  const c = ref.cases.find((x: { name: string }) => x.name === VIDEO_GOLDEN.caseName);
  if (!c) throw new Error(`video-reference.json has no case "${VIDEO_GOLDEN.caseName}"; run test/reference/video_reference.py`);
  const text = (c.text as string).replace(/<image\*(\d+)>/g, (_, n: string) => '<image>'.repeat(Number(n)));
  env.allowRemoteModels = false;
  env.allowLocalModels = true;
  env.localModelPath = `${root}/`;
  const tok = await AutoTokenizer.from_pretrained('public/models/smolvlm2-video-tiny');
  const ids = Array.from(tok.encode(text));
  const frames = new Uint8Array(4 * VIDEO_GOLDEN.width * VIDEO_GOLDEN.height * 3);
  for (let k = 0; k < 4; k++) frames.set(videoGoldenFrame(k), k * VIDEO_GOLDEN.width * VIDEO_GOLDEN.height * 3);
  writeFileSync(join(root, 'test/fixtures/goldens/tiny-video-frames.u8.bin'), frames);
  const out = {
    description:
      'Prompt ids of the 4-frame video golden: the reference text of video-reference.json case "tiny: 4 s at 5 fps", tokenized by transformers.js. Made by `npx tsx test/reference/make-video-input.ts`.',
    model: 'public/models/smolvlm2-video-tiny',
    frames: {
      file: 'test/fixtures/goldens/tiny-video-frames.u8.bin',
      shape: [4, VIDEO_GOLDEN.height, VIDEO_GOLDEN.width, 3],
      timestamps: VIDEO_GOLDEN.timestamps,
      duration: VIDEO_GOLDEN.duration,
    },
    prompt: VIDEO_GOLDEN.prompt,
    prompt_text: c.text,
    input_ids: ids,
    num_tokens: ids.length,
  };
  writeFileSync(join(root, 'test/fixtures/goldens/tiny-video-input.json'), `${JSON.stringify(out, null, 2)}\n`);
  console.log(`wrote tiny-video-frames.u8.bin and tiny-video-input.json (${ids.length} ids)`);
}
