// Writes test/fixtures/goldens/tiny-input.json (and smolvlm-tiny-so400m-input.json): the prompt token ids the
// Python reference (make_goldens.py) runs on. Python has no tokenizer here, so the ids come from
// transformers.js's Idefics3Processor, run fully offline on public/models/smolvlm-tiny (and the so400m-layout
// checkpoint, whose 126 px tiles of 9 image tokens give another prompt) with public/sample.png and the chat
//   [{ role: 'user', content: [{ type: 'image' }, { type: 'text', text: 'Can you describe this image?' }] }]
// rendered with the checkpoint's chat template and add_generation_prompt.
//
// transformers.js's pixel_values are NOT used by the reference (its Idefics3ImageProcessor resizes float
// tensors with its own interpolation, unlike HF's PIL LANCZOS); only their shape and the rows/cols are
// recorded, for information.
//
// Run: npx tsx test/reference/make-input.ts

import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AutoProcessor, RawImage, env } from '@huggingface/transformers';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
/** Checkpoint -> the input file its prompt goes to (the other tiny checkpoints share smolvlm-tiny's). */
const MODELS: Array<[string, string]> = [
  ['smolvlm-tiny', 'tiny-input.json'],
  ['smolvlm-tiny-so400m', 'smolvlm-tiny-so400m-input.json'],
];
const IMAGE = 'public/sample.png';
const PROMPT = 'Can you describe this image?';

env.allowRemoteModels = false;
env.allowLocalModels = true;
env.localModelPath = join(root, 'public/models/');

const messages = [{ role: 'user', content: [{ type: 'image' }, { type: 'text', text: PROMPT }] }];

for (const [MODEL, OUT] of MODELS) {
  const processor: any = await AutoProcessor.from_pretrained(MODEL);
  const text: string = processor.apply_chat_template(messages, { add_generation_prompt: true });
  const image = await RawImage.read(join(root, IMAGE));
  const inputs = await processor(text, image);

  const ids: number[] = Array.from(inputs.input_ids.data as BigInt64Array, (x) => Number(x));
  const imageTokenId: number = processor.tokenizer.convert_tokens_to_ids('<image>');
  const specialIds: Record<string, number> = {};
  for (const tok of ['<|im_start|>', '<end_of_utterance>', '<fake_token_around_image>', '<global-img>', '<image>', '<row_1_col_1>']) {
    specialIds[tok] = processor.tokenizer.convert_tokens_to_ids(tok);
  }

  // Structure summary: runs of identical ids collapsed, e.g. "49190x16".
  const runs: string[] = [];
  for (let i = 0; i < ids.length; ) {
    let j = i;
    while (j < ids.length && ids[j] === ids[i]) j++;
    runs.push(j - i > 1 ? `${ids[i]}x${j - i}` : `${ids[i]}`);
    i = j;
  }

  const out = {
    description: `Prompt token ids from transformers.js Idefics3Processor (${MODEL}, public/sample.png, chat template + add_generation_prompt). Made by \`npx tsx test/reference/make-input.ts\`.`,
    model: `public/models/${MODEL}`,
    image: IMAGE,
    messages,
    prompt_text: text,
    input_ids: ids,
    num_tokens: ids.length,
    image_token_id: imageTokenId,
    num_image_tokens: ids.filter((x) => x === imageTokenId).length,
    special_token_ids: specialIds,
    id_runs: runs.join(' '),
    transformers_js: {
      version: env.version,
      pixel_values_shape: inputs.pixel_values.dims,
      pixel_attention_mask_shape: inputs.pixel_attention_mask?.dims ?? null,
      rows: inputs.rows,
      cols: inputs.cols,
      original_sizes: inputs.original_sizes,
      reshaped_input_sizes: inputs.reshaped_input_sizes,
    },
    decoded: processor.tokenizer.decode(ids, { skip_special_tokens: false }),
  };

  const file = join(root, 'test/fixtures/goldens', OUT);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(out, null, 2)}\n`);
  console.log(
    `wrote ${file}: ${ids.length} ids, ${out.num_image_tokens} image tokens, rows ${JSON.stringify(inputs.rows)} cols ${JSON.stringify(inputs.cols)}, pixel_values ${JSON.stringify(inputs.pixel_values.dims)}`,
  );
}
