// The CPU runner's logit processors (penalties, a token mask) against the reference, as the WebGPU
// runner's (test/gpu/model-runner.test.ts): test/helpers/logit-processors.ts.

import * as ort from 'onnxruntime-node';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { NodeDirSource } from '../../src/io/model-source-node';
import { readModelConfig } from '../../src/families/read-config';
import { loadOrtModel, type OrtLoadedModel } from '../../src/model/ort/load-ort';
import { expectLogitProcessors } from '../helpers/logit-processors';
import { ensureTinyModels } from '../helpers/tiny-models';

let model: OrtLoadedModel;
beforeAll(async () => {
  const source = new NodeDirSource(`${ensureTinyModels()}/smolvlm-tiny`);
  model = await loadOrtModel({ ort, provider: 'cpu' }, source, await readModelConfig(source), {
    kvCacheTokens: 1024,
    maxTokensPerStep: 64,
  });
});
afterAll(() => model?.destroy());

describe('CPU runner', () => {
  it("applies each sampling row's penalties and token mask before argmax and the sampler", () => expectLogitProcessors(model.runner));
});
