// Writes test/fixtures/goldens/qwen-pipeline-input.json: for each tiny Qwen checkpoint, the prompt ids of
//   [{ role: 'user', content: [{ type: 'image' }, { type: 'text', text: 'Can you describe this image?' }] }]
// with public/sample.png, rendered with the checkpoint's chat template (add_generation_prompt), and the
// image's patch grid. Python has no tokenizer here, so the ids come from Tessera's prompt builder, which
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
export const QWEN_PIPELINE = {
  image: 'public/sample.png',
  prompt: 'Can you describe this image?',
  checkpoints: ['qwen2_5_vl-tiny', 'qwen3_vl-tiny'],
};

async function main(): Promise<void> {
  const image = await decodeImageNode(new Uint8Array(readFileSync(join(root, QWEN_PIPELINE.image))));
  const models = [];
  for (const name of QWEN_PIPELINE.checkpoints) {
    const files = new NodeDirSource(join(root, 'public/models', name));
    const tokenizer = await TextTokenizer.load(files);
    const template = new ChatTemplate(await loadChatTemplateSource(files, tokenizer.tokenizerConfig), tokenizer.templateTokens());
    const pre = parseQwenImageProcessorConfig(JSON.parse((await files.readText('preprocessor_config.json'))!));
    const { grid } = processQwenImage(image, pre);
    const prompt = buildQwenPrompt(
      template,
      tokenizer,
      [{ role: 'user', content: [{ type: 'image' }, { type: 'text', text: QWEN_PIPELINE.prompt }] }],
      [{ grid }],
      { mergeSize: pre.mergeSize },
    );
    models.push({ checkpoint: name, grid, ids: Array.from(prompt.ids), runs: prompt.runs });
    console.log(`${name}: grid ${grid.t} x ${grid.h} x ${grid.w}, ${prompt.ids.length} prompt tokens`);
  }
  const out = join(root, 'test/fixtures/goldens/qwen-pipeline-input.json');
  writeFileSync(out, `${JSON.stringify({ about: 'test/reference/make-qwen-input.ts', ...QWEN_PIPELINE, models })}\n`);
  console.log(`-> ${out}`);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await main();
