// The built command (dist/cli.js) on the tiny Qwen-VL checkpoints, on WebGPU: `tessera run` answers about
// an image with the reference tokens' text (qwen2_5_vl-tiny), and `tessera serve` answers the openai
// client's image_url request (a data: URL) with the same text (qwen3_vl-tiny). One family each, as each
// process loads and compiles for seconds; test/gpu/qwen-engine.test.ts runs both through the engine.

import { readFileSync } from 'node:fs';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { NodeDirSource } from '../../src/io/model-source-node';
import { TextTokenizer } from '../../src/processor/tokenizer';
import { qwenPipelineGoldens } from '../helpers/goldens';
import { runBuiltCli, startServeProcess } from '../helpers/serve-process';
import { ensureTinyModels } from '../helpers/tiny-models';

const { input, golden } = qwenPipelineGoldens();
const sample = input.cases.find((c) => c.id === 'sample')!;
const prompt = sample.content.find((p) => p.text)!.text!;
const image = sample.content.find((p) => p.image)!.image!;

/** The text of the reference's greedy tokens for the sample request. */
async function referenceText(name: string): Promise<string> {
  const tokens = golden.models.find((m) => m.checkpoint === name)!.cases.find((c) => c.id === 'sample')!.tokens;
  const tokenizer = await TextTokenizer.load(new NodeDirSource(`${ensureTinyModels()}/${name}`));
  return tokenizer.decode(tokens, true);
}

// One family each (the engine tests run both): the command's image path on Qwen2.5-VL, the server's on Qwen3-VL.
describe.each(['qwen2_5_vl-tiny'])('%s: the built command', (name) => {
  const model = () => `${ensureTinyModels()}/${name}`;
  const maxTokens = () => golden.models.find((m) => m.checkpoint === name)!.cases.find((c) => c.id === 'sample')!.tokens.length;

  it('tessera run answers about an image with the reference text, naming its patch grid', async () => {
    const { stdout, stderr } = await runBuiltCli([
      'run',
      '--model',
      model(),
      '--image',
      image,
      '--prompt',
      prompt,
      '--max-tokens',
      String(maxTokens()),
      '--device',
      'webgpu',
    ]);
    expect(stdout.trim()).toBe((await referenceText(name)).trim());
    const grid = input.models.find((m) => m.checkpoint === name)!.cases.find((c) => c.id === 'sample')!.grids[0];
    expect(stderr).toContain(`patch grid ${grid.t}x${grid.h}x${grid.w}`);
  }, 300_000);
});

it('qwen3_vl-tiny: tessera serve answers an image_url request from the openai client with the same text', async () => {
  const name = 'qwen3_vl-tiny';
  const model = () => `${ensureTinyModels()}/${name}`;
  const maxTokens = () => golden.models.find((m) => m.checkpoint === name)!.cases.find((c) => c.id === 'sample')!.tokens.length;
  const { child, url } = await startServeProcess(['--model', model(), '--served-model-name', 'tiny', '--port', '0', '--device', 'webgpu']);
  try {
    const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: 'none', maxRetries: 0 });
    const dataUrl = `data:image/png;base64,${readFileSync(image).toString('base64')}`;
    const answer = await client.chat.completions.create({
      model: 'tiny',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'image_url', image_url: { url: dataUrl } },
            { type: 'text', text: prompt },
          ],
        },
      ],
      max_tokens: maxTokens(),
      temperature: 0,
    });
    expect(answer.choices[0].message.content).toBe(await referenceText(name));
  } finally {
    child.kill('SIGKILL');
  }
});
