// Writes test/fixtures/goldens/qwen-pipeline-input.json: for each tiny Qwen checkpoint and each request of
// QWEN_PIPELINE_CASES (images of several sizes and aspect ratios, under and over the pixel budget, two in one
// message), the prompt ids rendered with the checkpoint's chat template (add_generation_prompt) and each
// image's patch grid. It also writes the cropped images the cases use. Python has no tokenizer here, so the ids come from Tessera's prompt builder, which
// test/unit/qwen-prompt.test.ts holds to HF's procedure; qwen_pipeline.py preprocesses the image itself
// (torchvision) and checks the grid against its own.
//
// Run: npx tsx test/reference/make-qwen-input.ts     (after `npx tsx scripts/make-tiny.ts`)

import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { NodeDirSource } from '../../src/io/model-source-node';
import { ChatTemplate, loadChatTemplateSource } from '../../src/processor/chat-template';
import { decodeImageNode } from '../../src/processor/image-decode-node';
import { parseQwenImageProcessorConfig, processQwenImage } from '../../src/processor/qwen-image-processor';
import { buildQwenPrompt } from '../../src/processor/qwen-prompt';
import { parseQwenVideoConfig, qwenGroupTimestamps, qwenVideoSize } from '../../src/processor/qwen-video';
import { TextTokenizer } from '../../src/processor/tokenizer';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** Crops of public/sample.png (640 x 480), lossless PNGs committed under test/fixtures/images/. */
const CROPS: Record<string, { left: number; top: number; width: number; height: number }> = {
  // 1 : 3, within both tiny checkpoints' pixel budgets (43200 of 50176 pixels).
  'test/fixtures/images/tall-120x360.png': { left: 260, top: 60, width: 120, height: 360 },
  // 960 pixels, under min_pixels (3136 and 4096): resized up.
  'test/fixtures/images/tiny-40x24.png': { left: 300, top: 200, width: 40, height: 24 },
  // Three frames of a pan across the picture, for the video request.
  'test/fixtures/images/pan-0.png': { left: 200, top: 150, width: 160, height: 120 },
  'test/fixtures/images/pan-1.png': { left: 240, top: 150, width: 160, height: 120 },
  'test/fixtures/images/pan-2.png': { left: 280, top: 150, width: 160, height: 120 },
};

/** A video part given as frames: their image files and seconds. */
interface VideoFrames {
  frames: string[];
  timestamps: number[];
}

/**
 * The requests: one message each, its image parts in order (by path) with the text around them. sample.png
 * is over max_pixels (307200 of 50176), so it is resized down.
 */
export const QWEN_PIPELINE_CASES: Array<{ id: string; content: Array<{ image?: string; text?: string; video?: VideoFrames }> }> = [
  { id: 'sample', content: [{ image: 'public/sample.png' }, { text: 'Can you describe this image?' }] },
  { id: 'tall', content: [{ image: 'test/fixtures/images/tall-120x360.png' }, { text: 'What is in this picture?' }] },
  { id: 'tiny', content: [{ image: 'test/fixtures/images/tiny-40x24.png' }, { text: 'What colour is this?' }] },
  {
    id: 'two-images',
    content: [
      { text: 'First' },
      { image: 'test/fixtures/images/tiny-40x24.png' },
      { text: 'then' },
      { image: 'test/fixtures/images/tall-120x360.png' },
      { text: 'Which one is larger?' },
    ],
  },
  {
    // Three frames (padded to two frame groups with the last); Qwen3-VL writes the groups' mean times,
    // 0.25 and 1.0 s, as "<0.2 seconds>" (Python's tie to even) and "<1.0 seconds>".
    id: 'video',
    content: [
      {
        video: {
          frames: ['test/fixtures/images/pan-0.png', 'test/fixtures/images/pan-1.png', 'test/fixtures/images/pan-2.png'],
          timestamps: [0, 0.5, 1],
        },
      },
      { text: 'What happens in this video?' },
    ],
  },
];
export const QWEN_PIPELINE_CHECKPOINTS = ['qwen2_5_vl-tiny', 'qwen3_vl-tiny'];

async function writeCrops(): Promise<void> {
  const sharp = (await import('sharp')).default;
  for (const [path, region] of Object.entries(CROPS)) {
    await sharp(join(root, 'public/sample.png')).extract(region).png().toFile(join(root, path));
  }
}

async function main(): Promise<void> {
  await writeCrops();
  const models = [];
  for (const name of QWEN_PIPELINE_CHECKPOINTS) {
    const files = new NodeDirSource(join(root, 'public/models', name));
    const tokenizer = await TextTokenizer.load(files);
    const template = new ChatTemplate(await loadChatTemplateSource(files, tokenizer.tokenizerConfig), tokenizer.templateTokens());
    const pre = parseQwenImageProcessorConfig(JSON.parse((await files.readText('preprocessor_config.json'))!));
    const config = JSON.parse((await files.readText('config.json'))!);
    const family = config.model_type as 'qwen2_5_vl' | 'qwen3_vl';
    const tokensPerSecond = family === 'qwen2_5_vl' ? (config.vision_config.tokens_per_second as number) : undefined;
    const videoPre = await files.readText('video_preprocessor_config.json');
    const videoConfig = parseQwenVideoConfig(family, pre, videoPre ? JSON.parse(videoPre) : undefined);
    const cases = [];
    for (const c of QWEN_PIPELINE_CASES) {
      const grids = [];
      const videos = [];
      for (const part of c.content) {
        if (part.image) grids.push(processQwenImage(await decodeImageNode(new Uint8Array(readFileSync(join(root, part.image)))), pre).grid);
        if (!part.video) continue;
        const first = await decodeImageNode(new Uint8Array(readFileSync(join(root, part.video.frames[0]!))));
        const [h, w] = qwenVideoSize(part.video.frames.length, first.height, first.width, videoConfig, pre);
        videos.push({
          group: { h: h / pre.patchSize, w: w / pre.patchSize },
          timestamps: qwenGroupTimestamps(part.video.timestamps, pre.temporalPatchSize),
          ...(tokensPerSecond !== undefined ? { secondsPerGroup: pre.temporalPatchSize / 2 } : {}),
        });
      }
      const content = c.content.map((p) =>
        p.image ? { type: 'image' as const } : p.video ? { type: 'video' as const } : { type: 'text' as const, text: p.text! },
      );
      const prompt = buildQwenPrompt(
        template,
        tokenizer,
        [{ role: 'user', content }],
        grids.map((grid) => ({ grid })),
        { mergeSize: pre.mergeSize, tokensPerSecond, videos },
      );
      cases.push({ id: c.id, grids, videos, ids: Array.from(prompt.ids), runs: prompt.runs });
      const shapes = [
        ...grids.map((g) => `${g.t} x ${g.h} x ${g.w}`),
        ...videos.map((v) => `video ${v.timestamps.length} x ${v.group.h} x ${v.group.w}`),
      ];
      console.log(`${name} ${c.id}: ${shapes.join(', ')}, ${prompt.ids.length} prompt tokens`);
    }
    models.push({ checkpoint: name, cases });
  }
  const out = join(root, 'test/fixtures/goldens/qwen-pipeline-input.json');
  writeFileSync(out, `${JSON.stringify({ about: 'test/reference/make-qwen-input.ts', cases: QWEN_PIPELINE_CASES, models })}\n`);
  console.log(`-> ${out}`);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await main();
