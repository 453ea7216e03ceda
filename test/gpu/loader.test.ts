// Loading checkpoints: every variant the HF layout allows, and every way a checkpoint can be broken,
// each a named error with the numbers (and the GPU untouched when the header already shows the problem).

import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import {
  CheckpointFormatError,
  HeadDimError,
  MissingTensorError,
  ModelFileError,
  TensorShapeError,
  TruncatedFileError,
  UnsupportedModelError,
} from '../../src/errors';
import { MemorySource } from '../../src/io/model-source';
import { parseModelConfig } from '../../src/families/registry';
import { loadModel } from '../../src/families/load';
import { writeSafetensors } from '../../src/model/weights/safetensors-writer';
import { weightLayout } from '../../src/model/weight-layout';
import { microConfig, microSource, tensorsFor } from '../helpers/micro-checkpoint';
import { useGpu } from './gpu';

const gpu = useGpu();
const source = microSource;
const load = (s: MemorySource) => loadModel(gpu(), s, { kvCacheTokens: 64, maxTokensPerStep: 16 });

describe('checkpoint variants', () => {
  for (const dtype of ['F32', 'F16', 'BF16'] as const) {
    it(`single file, ${dtype} weights`, async () => {
      const config = microConfig();
      const createBuffer = vi.spyOn(gpu().device, 'createBuffer');
      const m = await load(source(config, { 'model.safetensors': writeSafetensors(tensorsFor(config, dtype)) }));
      const weightBuffers = createBuffer.mock.calls.filter(([d]) => String(d.label).startsWith('weight:')).length;
      createBuffer.mockRestore();
      expect(weightBuffers).toBe(weightLayout(parseModelConfig(config)).gpu.length);
      expect(m.weights.sizeBytes).toBeGreaterThan(0);
      m.destroy();
    });
  }

  it('sharded with model.safetensors.index.json, tied embeddings, model_type smolvlm', async () => {
    const config = microConfig({ model_type: 'smolvlm', tie_word_embeddings: true });
    const tensors = tensorsFor(config);
    expect(tensors.some((t) => t.name === 'lm_head.weight')).toBe(false);
    const [a, b] = [tensors.slice(0, 10), tensors.slice(10)];
    const weightMap = Object.fromEntries([...a.map((t) => [t.name, 'a.safetensors']), ...b.map((t) => [t.name, 'b.safetensors'])]);
    const m = await load(
      source(config, {
        'model.safetensors.index.json': new TextEncoder().encode(JSON.stringify({ weight_map: weightMap })),
        'a.safetensors': writeSafetensors(a),
        'b.safetensors': writeSafetensors(b),
      }),
    );
    expect(m.weights.get('text.lm_head')).toBe(m.weights.get('text.embed'));
    m.destroy();
  });

  // What a transformers save of a tied composite model writes: the flag in text_config only, no lm_head.
  const textTied = (top: boolean | undefined) => {
    const config = microConfig();
    config.text_config = { ...config.text_config, tie_word_embeddings: true };
    if (top === undefined) delete config.tie_word_embeddings;
    else config.tie_word_embeddings = top;
    return config;
  };
  const shard = (tensors: ReturnType<typeof tensorsFor>) => {
    const [a, b] = [tensors.slice(0, 10), tensors.slice(10)];
    const weightMap = Object.fromEntries([...a.map((t) => [t.name, 'a.safetensors']), ...b.map((t) => [t.name, 'b.safetensors'])]);
    return {
      'model.safetensors.index.json': new TextEncoder().encode(JSON.stringify({ weight_map: weightMap })),
      'a.safetensors': writeSafetensors(a),
      'b.safetensors': writeSafetensors(b),
    };
  };

  it('tie_word_embeddings only in text_config ties the head, in one file and sharded', async () => {
    const config = textTied(undefined);
    expect(parseModelConfig(config).tieWordEmbeddings).toBe(true);
    const tensors = tensorsFor(config);
    expect(tensors.some((t) => t.name === 'lm_head.weight')).toBe(false);
    for (const files of [{ 'model.safetensors': writeSafetensors(tensors) }, shard(tensors)]) {
      const m = await load(source(config, files));
      expect(m.weights.get('text.lm_head')).toBe(m.weights.get('text.embed'));
      m.destroy();
    }
  });

  it('top level false, text_config true: the lm_head tensor when there is one, else the embedding', async () => {
    const config = textTied(false);
    expect(parseModelConfig(config)).toMatchObject({ tieWordEmbeddings: false, tieIfHeadMissing: true });
    const withHead = tensorsFor(config);
    expect(withHead.some((t) => t.name === 'lm_head.weight')).toBe(true);
    const withoutHead = withHead.filter((t) => t.name !== 'lm_head.weight');
    const own = await load(source(config, { 'model.safetensors': writeSafetensors(withHead) }));
    expect(own.weights.get('text.lm_head')).not.toBe(own.weights.get('text.embed'));
    own.destroy();
    for (const files of [{ 'model.safetensors': writeSafetensors(withoutHead) }, shard(withoutHead)]) {
      const m = await load(source(config, files));
      expect(m.weights.get('text.lm_head')).toBe(m.weights.get('text.embed'));
      m.destroy();
    }
  });

  it('no level ties: a missing lm_head is still a named error', async () => {
    const config = microConfig();
    const tensors = tensorsFor(config).filter((t) => t.name !== 'lm_head.weight');
    const err = await load(source(config, { 'model.safetensors': writeSafetensors(tensors) })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MissingTensorError);
    expect((err as Error).message).toContain("tensor 'lm_head.weight'");
  });

  it("granite-docling's real config parses as tied idefics3", () => {
    const granite = JSON.parse(readFileSync(resolve(import.meta.dirname, '../fixtures/models/granite-docling-258M/config.json'), 'utf8'));
    const c = parseModelConfig(granite);
    expect(c.tieWordEmbeddings).toBe(true);
    expect(c.text.vocabSize).toBe(100352);
    expect(weightLayout(c).aliases['text.lm_head']).toBe('text.embed');
  });
});

describe('broken checkpoints', () => {
  it('an unsupported model_type is named', async () => {
    const err = await load(source(microConfig({ model_type: 'llava' }), {})).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnsupportedModelError);
    expect((err as Error).message).toContain("model_type 'llava' is not supported");
  });

  it('a missing tensor is named with its shape, before anything is uploaded', async () => {
    const config = microConfig();
    const tensors = tensorsFor(config).filter((t) => t.name !== 'model.text_model.norm.weight');
    const createBuffer = vi.spyOn(gpu().device, 'createBuffer');
    const err = await load(source(config, { 'model.safetensors': writeSafetensors(tensors) })).catch((e: unknown) => e);
    const weightBuffers = createBuffer.mock.calls.filter(([d]) => String(d.label).startsWith('weight:')).length;
    createBuffer.mockRestore();
    expect(err).toBeInstanceOf(MissingTensorError);
    expect((err as Error).message).toBe(
      "tensor 'model.text_model.norm.weight' (shape [64]) is missing from model.safetensors; the checkpoint does not match its config.json.",
    );
    expect(weightBuffers).toBe(0);
  });

  it('a misshaped tensor gives both shapes', async () => {
    const config = microConfig();
    const tensors = tensorsFor(config).map((t) =>
      t.name === 'model.connector.modality_projection.proj.weight' ? { ...t, shape: [64, 256], data: new Float32Array(64 * 256) } : t,
    );
    const err = await load(source(config, { 'model.safetensors': writeSafetensors(tensors) })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TensorShapeError);
    expect((err as Error).message).toContain(
      "tensor 'model.connector.modality_projection.proj.weight' in model.safetensors has shape [64, 256] but config.json implies [64, 512]",
    );
  });

  it('a truncated file gives the byte counts', async () => {
    const config = microConfig();
    const bytes = writeSafetensors(tensorsFor(config));
    const cut = bytes.subarray(0, bytes.byteLength - 1000);
    const err = await load(source(config, { 'model.safetensors': cut })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TruncatedFileError);
    // The source knows the file's size, so the header's total is checked before anything is allocated.
    expect((err as Error).message).toContain(
      `needs ${bytes.byteLength} bytes but the file has ${cut.byteLength} (the header describes more tensor data than the file holds)`,
    );
  });

  it('bytes that are not safetensors are named', async () => {
    const err = await load(source(microConfig(), { 'model.safetensors': new TextEncoder().encode('<html>not found</html>') })).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(CheckpointFormatError);
  });

  it('an index that points at a missing shard is named', async () => {
    const config = microConfig();
    const weightMap = Object.fromEntries(tensorsFor(config).map((t) => [t.name, 'gone.safetensors']));
    const err = await load(
      source(config, { 'model.safetensors.index.json': new TextEncoder().encode(JSON.stringify({ weight_map: weightMap })) }),
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MissingTensorError);
    expect((err as Error).message).toContain('the file gone.safetensors does not exist');
  });

  it('a head_dim the attention kernels cannot run is a HeadDimError with the number, before any upload', () => {
    const text = (headDim: number) => microConfig({ text_config: { ...microConfig().text_config, head_dim: headDim } });
    for (const [config, headDim, why] of [
      [text(66), 66, /not a multiple of 4/],
      [text(320), 320, /above the largest supported head size, 256/],
      // vision head_dim = hidden_size / num_attention_heads = 130 / 2
      [microConfig({ vision_config: { ...microConfig().vision_config, hidden_size: 130 } }), 65, /not a multiple of 4/],
    ] as const) {
      let err: unknown;
      try {
        parseModelConfig(config);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(HeadDimError);
      expect((err as HeadDimError).headDim).toBe(headDim);
      expect((err as Error).message).toContain(`head_dim ${headDim}`);
      expect((err as Error).message).toMatch(why);
    }
  });

  it('a folder without config.json is named', async () => {
    const err = await loadModel(gpu(), new MemorySource({}, 'empty folder')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ModelFileError);
    expect((err as Error).message).toContain('empty folder has no config.json');
  });
});
