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
import { TextTokenizer } from '../../src/processor/tokenizer';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** Crops of public/sample.png (640 x 480), lossless PNGs committed under test/fixtures/images/. */
const CROPS: Record<string, { left: number; top: number; width: number; height: number }> = {
  // 1 : 3, within both tiny checkpoints' pixel budgets (43200 of 50176 pixels).
  'test/fixtures/images/tall-120x360.png': { left: 260, top: 60, width: 120, height: 360 },
  // 960 pixels, under min_pixels (3136 and 4096): resized up.
  'test/fixtures/images/tiny-40x24.png': { left: 300, top: 200, width: 40, height: 24 },
};

/**
 * The requests: one message each, its image parts in order (by path) with the text around them. sample.png
 * is over max_pixels (307200 of 50176), so it is resized down.
 */
export const QWEN_PIPELINE_CASES = [
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
    const cases = [];
    for (const c of QWEN_PIPELINE_CASES) {
      const grids = [];
      for (const part of c.content) {
        if (!('image' in part)) continue;
        grids.push(processQwenImage(await decodeImageNode(new Uint8Array(readFileSync(join(root, part.image!)))), pre).grid);
      }
      const prompt = buildQwenPrompt(
        template,
        tokenizer,
        [
          {
            role: 'user',
            content: c.content.map((p) => ('image' in p ? { type: 'image' as const } : { type: 'text' as const, text: p.text! })),
          },
        ],
        grids.map((grid) => ({ grid })),
        { mergeSize: pre.mergeSize },
      );
      cases.push({ id: c.id, grids, ids: Array.from(prompt.ids), runs: prompt.runs });
      console.log(`${name} ${c.id}: grids ${grids.map((g) => `${g.t} x ${g.h} x ${g.w}`).join(', ')}, ${prompt.ids.length} prompt tokens`);
    }
    models.push({ checkpoint: name, cases });
  }
  const out = join(root, 'test/fixtures/goldens/qwen-pipeline-input.json');
  writeFileSync(out, `${JSON.stringify({ about: 'test/reference/make-qwen-input.ts', cases: QWEN_PIPELINE_CASES, models })}\n`);
  console.log(`-> ${out}`);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await main();
