// The decoders of the real Qwen-VL configs (test/fixtures/models): Qwen2.5-VL-3B-Instruct's text fields at
// the top level, q/k/v biases and contiguous M-RoPE; Qwen3-VL-2B/4B-Instruct's text_config, q/k norms and
// interleaved M-RoPE; the checkpoint names the weight layout then expects (Qwen2.5-VL-3B's index lists
// model.layers.i.self_attn.q_proj.bias; Qwen3-VL's file has model.language_model.layers.i.self_attn.q_norm);
// and the named errors for decoder settings the runtime does not run.

import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ModelConfigError, UnsupportedModelError } from '../../src/errors';
import { parseQwen25VlConfig, parseQwen25VlText } from '../../src/families/qwen2_5_vl/config';
import { parseQwen3VlConfig, parseQwen3VlText } from '../../src/families/qwen3_vl/config';
import type { ModelConfig } from '../../src/model/config';
import { weightLayout } from '../../src/model/weight-layout';

const real = (name: string) =>
  JSON.parse(readFileSync(resolve(import.meta.dirname, `../fixtures/models/${name}/config.json`), 'utf8')) as Record<string, any>;
const QWEN25 = real('Qwen2.5-VL-3B-Instruct');
const QWEN3_2B = real('Qwen3-VL-2B-Instruct');
const QWEN3_4B = real('Qwen3-VL-4B-Instruct');

const checkpointNames = (c: Omit<ModelConfig, 'vision' | 'audio'>) => weightLayout(c as ModelConfig).checkpoint.map((t) => t.name);

describe('Qwen2.5-VL decoder config', () => {
  it('Qwen2.5-VL-3B-Instruct: a 36-layer Qwen2 decoder with q/k/v biases, M-RoPE [16, 24, 24] in order, tied head', () => {
    const c = parseQwen25VlText(QWEN25);
    expect(c.family).toBe('qwen2_5_vl');
    expect(c.text).toEqual({
      hiddenSize: 2048,
      intermediateSize: 11008,
      numLayers: 36,
      numHeads: 16,
      numKvHeads: 2,
      headDim: 128,
      rmsNormEps: 1e-6,
      ropeTheta: 1e6,
      vocabSize: 151936,
      maxPositions: 128000,
      qkvBias: true,
      mrope: { section: [16, 24, 24], interleaved: false },
    });
    expect(c.tieWordEmbeddings).toBe(true);
    const names = checkpointNames(c);
    expect(names).toContain('model.embed_tokens.weight');
    expect(names).toContain('model.layers.35.self_attn.q_proj.bias');
    expect(names).toContain('model.layers.0.self_attn.k_proj.bias');
    expect(names).not.toContain('lm_head.weight');
    expect(names.some((n) => n.includes('o_proj.bias') || n.includes('q_norm'))).toBe(false);
  });

  it('reads the text fields from text_config when a newer save puts them there', () => {
    const { hidden_size, num_hidden_layers, rope_scaling, ...top } = QWEN25;
    const c = parseQwen25VlText({
      ...top,
      text_config: { ...QWEN25, hidden_size: 1024, num_attention_heads: 8, num_hidden_layers: 4, rope_scaling },
    });
    expect(c.text).toMatchObject({
      hiddenSize: 1024,
      numHeads: 8,
      headDim: 128,
      numLayers: 4,
      mrope: { section: [16, 24, 24], interleaved: false },
    });
    expect(hidden_size).toBe(2048);
    expect(num_hidden_layers).toBe(36);
  });

  it('names what it cannot run: no M-RoPE, a section that does not fill head_dim / 2, scaled rope, sliding windows', () => {
    const { rope_scaling: _, ...noRope } = QWEN25;
    expect(() => parseQwen25VlText(noRope)).toThrow(/needs rope_scaling.mrope_section/);
    expect(() => parseQwen25VlText({ ...QWEN25, rope_scaling: { type: 'mrope', mrope_section: [16, 24, 16] } })).toThrow(
      /sums to 56; it must be head_dim \/ 2 = 64/,
    );
    expect(() => parseQwen25VlText({ ...QWEN25, rope_scaling: { type: 'yarn', mrope_section: [16, 24, 24] } })).toThrow(ModelConfigError);
    expect(() => parseQwen25VlText({ ...QWEN25, use_sliding_window: true })).toThrow(UnsupportedModelError);
  });
});

describe('Qwen2.5-VL vision config', () => {
  it('Qwen2.5-VL-3B-Instruct: 32 blocks of 1280 (16 heads of 80), windows of 112 px, full attention in 7, 15, 23, 31', () => {
    const c = parseQwen25VlConfig(QWEN25);
    expect(c.qwenVision).toEqual({
      kind: 'qwen2_5_vl',
      hiddenSize: 1280,
      intermediateSize: 3420,
      numLayers: 32,
      numHeads: 16,
      headDim: 80,
      patchSize: 14,
      temporalPatchSize: 2,
      inChannels: 3,
      mergeSize: 2,
      outHiddenSize: 2048,
      windowSize: 112,
      fullAttentionLayers: [7, 15, 23, 31],
      tokensPerSecond: 2,
      prefix: 'visual',
      imageTokenId: 151655,
    });
    // The names and shapes of Qwen2.5-VL-3B-Instruct's model.safetensors.index.json.
    const specs = new Map(weightLayout(c).checkpoint.map((t) => [t.name, t.shape]));
    expect(specs.get('visual.patch_embed.proj.weight')).toEqual([1280, 3, 2, 14, 14]);
    expect(specs.get('visual.blocks.31.attn.qkv.bias')).toEqual([3840]);
    expect(specs.get('visual.blocks.0.mlp.gate_proj.bias')).toEqual([3420]);
    expect(specs.get('visual.merger.mlp.0.weight')).toEqual([5120, 5120]);
    expect(specs.get('visual.merger.mlp.2.weight')).toEqual([2048, 5120]);
    expect(specs.has('visual.patch_embed.proj.bias')).toBe(false);
    expect(specs.has('visual.blocks.0.norm1.bias')).toBe(false);
  });

  it('names what it cannot run: windows off the merge grid, a full-attention layer past the depth, another MLP, another width', () => {
    const withVision = (patch: Record<string, unknown>) => ({ ...QWEN25, vision_config: { ...QWEN25.vision_config, ...patch } });
    expect(() => parseQwen25VlConfig(withVision({ window_size: 100 }))).toThrow(/multiple of patch_size × spatial_merge_size = 28/);
    expect(() => parseQwen25VlConfig(withVision({ fullatt_block_indexes: [7, 32] }))).toThrow(/layers of 0..31/);
    expect(() => parseQwen25VlConfig(withVision({ hidden_act: 'gelu' }))).toThrow(UnsupportedModelError);
    expect(() => parseQwen25VlConfig(withVision({ out_hidden_size: 3584 }))).toThrow(/must equal the decoder's hidden_size 2048/);
  });
});

describe('Qwen3-VL decoder config', () => {
  it('Qwen3-VL-2B-Instruct: a 28-layer Qwen3 decoder with q/k norms, interleaved M-RoPE [24, 20, 20], tied head', () => {
    const c = parseQwen3VlText(QWEN3_2B);
    expect(c.family).toBe('qwen3_vl');
    expect(c.text).toEqual({
      hiddenSize: 2048,
      intermediateSize: 6144,
      numLayers: 28,
      numHeads: 16,
      numKvHeads: 8,
      headDim: 128,
      rmsNormEps: 1e-6,
      ropeTheta: 5e6,
      vocabSize: 151936,
      maxPositions: 262144,
      qkNorm: true,
      mrope: { section: [24, 20, 20], interleaved: true },
      deepstackLayers: 3,
    });
    expect(c.tieWordEmbeddings).toBe(true);
    const names = checkpointNames(c);
    expect(names).toContain('model.language_model.layers.27.self_attn.q_norm.weight');
    expect(names).toContain('model.language_model.layers.0.self_attn.k_norm.weight');
    expect(names).toContain('model.language_model.norm.weight');
    expect(names.some((n) => n.endsWith('_proj.bias'))).toBe(false);
  });

  it('Qwen3-VL-4B-Instruct: 32 heads of 128 over hidden 2560 (q is wider than the hidden state)', () => {
    const c = parseQwen3VlText(QWEN3_4B);
    expect(c.text).toMatchObject({ hiddenSize: 2560, numHeads: 32, numKvHeads: 8, headDim: 128, numLayers: 36 });
    const qkv = weightLayout(c as ModelConfig).gpu.find((w) => w.key === 'text.layers.0.qkv')!;
    expect(qkv.shape).toEqual([(32 + 2 * 8) * 128, 2560]);
  });

  it("takes transformers 5's rope_parameters and the default section when none is named", () => {
    const { rope_scaling, rope_theta, ...text } = QWEN3_2B.text_config;
    const c = parseQwen3VlText({
      ...QWEN3_2B,
      text_config: { ...text, rope_parameters: { rope_type: 'default', rope_theta: 1234567, mrope_section: [24, 20, 20] } },
    });
    expect(c.text).toMatchObject({ ropeTheta: 1234567, mrope: { section: [24, 20, 20], interleaved: true } });
    expect(rope_scaling.mrope_interleaved).toBe(true);
    expect(rope_theta).toBe(5000000);
    const bare = parseQwen3VlText({ ...QWEN3_2B, text_config: text });
    expect(bare.text).toMatchObject({ ropeTheta: 5e6, mrope: { section: [24, 20, 20], interleaved: true } });
  });

  it('names what it cannot run: biases on every projection, a section of the wrong size', () => {
    expect(() => parseQwen3VlText({ ...QWEN3_2B, text_config: { ...QWEN3_2B.text_config, attention_bias: true } })).toThrow(
      UnsupportedModelError,
    );
    const withSection = (s: number[]) => ({
      ...QWEN3_2B,
      text_config: { ...QWEN3_2B.text_config, rope_scaling: { ...QWEN3_2B.text_config.rope_scaling, mrope_section: s } },
    });
    expect(() => parseQwen3VlText(withSection([24, 20]))).toThrow(/three whole numbers/);
    expect(() => parseQwen3VlText(withSection([32, 32, 32]))).toThrow(/head_dim \/ 2 = 64/);
  });
});

describe('Qwen3-VL vision config', () => {
  it('Qwen3-VL-2B-Instruct: 24 blocks of 1024 (16 heads of 64), patch 16, a 48 x 48 position grid, DeepStack taps 5, 11, 17', () => {
    const c = parseQwen3VlConfig(QWEN3_2B);
    expect(c.qwenVision).toEqual({
      kind: 'qwen3_vl',
      hiddenSize: 1024,
      intermediateSize: 4096,
      numLayers: 24,
      numHeads: 16,
      headDim: 64,
      patchSize: 16,
      temporalPatchSize: 2,
      inChannels: 3,
      mergeSize: 2,
      outHiddenSize: 2048,
      prefix: 'model.visual',
      gridPerSide: 48,
      deepstackTaps: [5, 11, 17],
      imageTokenId: 151655,
    });
    // The names and shapes of the real Qwen3-VL checkpoints' model.visual.* tensors.
    const specs = new Map(weightLayout(c).checkpoint.map((t) => [t.name, t.shape]));
    expect(specs.get('model.visual.patch_embed.proj.weight')).toEqual([1024, 3, 2, 16, 16]);
    expect(specs.get('model.visual.patch_embed.proj.bias')).toEqual([1024]);
    expect(specs.get('model.visual.pos_embed.weight')).toEqual([2304, 1024]);
    expect(specs.get('model.visual.blocks.23.mlp.linear_fc1.weight')).toEqual([4096, 1024]);
    expect(specs.get('model.visual.merger.norm.weight')).toEqual([1024]);
    expect(specs.get('model.visual.deepstack_merger_list.2.norm.weight')).toEqual([4096]);
    expect(specs.get('model.visual.deepstack_merger_list.0.linear_fc2.weight')).toEqual([2048, 4096]);
    expect(specs.has('model.visual.deepstack_merger_list.3.norm.weight')).toBe(false);
  });

  it('names what it cannot run: a position table that is not square, a tap past the depth, another activation', () => {
    const withVision = (patch: Record<string, unknown>) => ({ ...QWEN3_2B, vision_config: { ...QWEN3_2B.vision_config, ...patch } });
    expect(() => parseQwen3VlConfig(withVision({ num_position_embeddings: 2300 }))).toThrow(/not a square grid/);
    expect(() => parseQwen3VlConfig(withVision({ deepstack_visual_indexes: [5, 24] }))).toThrow(/layers of 0..23/);
    expect(() => parseQwen3VlConfig(withVision({ hidden_act: 'silu' }))).toThrow(UnsupportedModelError);
  });
});
