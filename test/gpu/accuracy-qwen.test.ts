// Accuracy of the smaller weight dtypes against f32 on the tiny Qwen-VL checkpoints, through the whole model
// (the vision tower with Qwen3-VL's DeepStack mergers, the M-RoPE decoder and the LM head, all in that
// dtype), as accuracy.test.ts measures SmolVLM: first-step logits error and KL divergence, and top-1
// agreement over 256 teacher-forced positions (sample.png's request, then a fixed pseudo-random
// continuation at index + delta positions). The f32 first step is also held to test/reference/
// qwen_pipeline.py's logits for the same request.
//
// Held: f16 >= 99.9% top-1 agreement over all positions (qwen3_vl-tiny's weights are F16, so f16 keeps
// them exactly: measured identical logits; qwen2_5_vl-tiny's are BF16: mean KL 8.8e-13). q8 >= 90% of all
// and >= 97% of the decisive positions (f32's top-1 leads by >= 0.1 nat); measured 94.9% / 99.1% and
// 95.7% / 100%. q4 >= 30% of both; measured 48.4% / 49.6% and 44.9% / 47.8% (mean KL 0.36 and 0.31), below
// smolvlm-tiny's 65% (KL 0.16): these towers and decoders are 64 wide, so every q4 row is two groups of
// 32, and the 151936-token random head has many near-ties. A broken path agrees by chance only (about
// 0%), and each format's mean KL must lie above the next larger one's.

import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { readModelConfig } from '../../src/families/read-config';
import { NodeDirSource } from '../../src/io/model-source-node';
import type { ModelConfig } from '../../src/model/config';
import { loadModelWithConfig } from '../../src/model/load';
import { QwenVisionEncoder } from '../../src/model/qwen-vision-encoder';
import { compareLogits, type LogitsAgreement, teacherForcedLogits } from '../../src/model/weights/accuracy';
import type { WeightDtype } from '../../src/model/weights/dtype';
import { ChatTemplate, loadChatTemplateSource } from '../../src/processor/chat-template';
import { decodeImageNode } from '../../src/processor/image-decode-node';
import { mropeChunk } from '../../src/processor/mrope-positions';
import { parseQwenImageProcessorConfig, type QwenProcessedImage, processQwenImage } from '../../src/processor/qwen-image-processor';
import { buildQwenPrompt } from '../../src/processor/qwen-prompt';
import { TextTokenizer } from '../../src/processor/tokenizer';
import { mulberry32 } from '../../src/selfcheck/random';
import { qwenPipelineGoldens } from '../helpers/goldens';
import { ensureTinyModels } from '../helpers/tiny-models';
import { useGpu } from './gpu';

const gpu = useGpu();
const POSITIONS = 256;
const { input, golden } = qwenPipelineGoldens();
const SAMPLE = input.cases.find((c) => c.id === 'sample')!;

describe.each(golden.models.map((m) => [m.checkpoint, m] as const))(
  'dtype accuracy against f32 (%s, 256 teacher-forced positions)',
  (name, want) => {
    let files: NodeDirSource;
    let config: ModelConfig;
    let image: QwenProcessedImage;
    let prompt: ReturnType<typeof buildQwenPrompt>;
    let ids: Uint32Array;
    let ref: Float32Array[];
    const results: Record<string, LogitsAgreement> = {};

    async function logitsFor(dtype: WeightDtype): Promise<Float32Array[]> {
      const model = await loadModelWithConfig(gpu(), files, config, { kvCacheTokens: 1024, maxTokensPerStep: 128, maxSeqs: 128, dtype });
      try {
        const rows = await new QwenVisionEncoder(gpu(), model.weights, config.qwenVision!).encode(image.patches, image.grid);
        const run = prompt.runs[0]!;
        return await teacherForcedLogits(model, {
          ids,
          media: {
            embeddings: rows.embeddings,
            placeholders: [{ offset: run.start, length: rows.embeddings.length / config.text.hiddenSize }],
            ...(rows.deepstack.length > 0 ? { deepstack: rows.deepstack } : {}),
          },
          ropePositions: mropeChunk(prompt.positions, 0, ids.length),
          numPositions: POSITIONS,
        });
      } finally {
        model.destroy();
      }
    }

    beforeAll(async () => {
      files = new NodeDirSource(`${ensureTinyModels()}/${name}`);
      config = await readModelConfig(files);
      const pre = parseQwenImageProcessorConfig(JSON.parse((await files.readText('preprocessor_config.json'))!));
      const imagePart = SAMPLE.content.find((p) => p.image)!;
      image = processQwenImage(await decodeImageNode(new Uint8Array(readFileSync(resolve(imagePart.image!)))), pre);
      const tokenizer = await TextTokenizer.load(files);
      const template = new ChatTemplate(await loadChatTemplateSource(files, tokenizer.tokenizerConfig), tokenizer.templateTokens());
      const content = SAMPLE.content.map((p) => (p.image ? { type: 'image' as const } : { type: 'text' as const, text: p.text! }));
      prompt = buildQwenPrompt(template, tokenizer, [{ role: 'user', content }], [{ grid: image.grid }], { mergeSize: pre.mergeSize });
      const next = mulberry32(8);
      const continuation = Array.from({ length: POSITIONS - 1 }, () => Math.floor(next() * 151000));
      ids = Uint32Array.from([...prompt.ids, ...continuation]); // positions: the last prompt token, then 255 more
      ref = await logitsFor('f32');
    }, 300_000);

    it("f32 teacher forcing gives the reference's first step (the same request's prompt and logits)", () => {
      const given = input.models.find((m) => m.checkpoint === name)!.cases.find((c) => c.id === 'sample')!;
      expect(Array.from(prompt.ids)).toEqual(given.ids);
      expect(ref).toHaveLength(POSITIONS);
      const top = want.cases.find((c) => c.id === 'sample')!.stepTop[0]!;
      // Within what the image resize moves them (qwen-pipeline.test.ts).
      for (const [j, id] of top.ids.entries()) expect(Math.abs(ref[0]![id]! - top.logits[j]!)).toBeLessThan(1e-2);
    });

    for (const [dtype, minAll, minDecisive] of [
      ['f16', 0.999, 0.999],
      ['q8', 0.9, 0.97],
      ['q4', 0.3, 0.3],
    ] as const) {
      it(`${dtype}: top-1 agreement >= ${minAll * 100}% of all positions, >= ${minDecisive * 100}% of decisive ones`, async () => {
        const r = compareLogits(ref, await logitsFor(dtype), 0);
        results[dtype] = r;
        console.log(
          `accuracy ${name} ${dtype}: top-1 ${(r.top1Agreement * 100).toFixed(2)}% of ${r.positions} ` +
            `(${(r.top1AgreementDecisive * 100).toFixed(2)}% of ${r.decisivePositions} decisive), mean KL ${r.meanKl.toExponential(2)}, ` +
            `max KL ${r.maxKl.toExponential(2)}, first-step max |err| ${r.firstStepMaxAbsErr.toExponential(2)}, first-step KL ${r.firstStepKl.toExponential(2)}`,
        );
        expect(r.top1Agreement).toBeGreaterThanOrEqual(minAll);
        expect(r.top1AgreementDecisive).toBeGreaterThanOrEqual(minDecisive);
        expect(r.decisivePositions).toBeGreaterThan(150);
        if (dtype === 'q4') expect(results.q4!.meanKl).toBeGreaterThan(results.q8!.meanKl);
        if (dtype === 'q8') expect(results.q8!.meanKl).toBeGreaterThan(results.f16!.meanKl);
      });
    }
  },
);
