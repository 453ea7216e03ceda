// Voxtral's config.json (test/fixtures/models/Voxtral-Mini-3B-2507) parsed into the audio side: the
// Whisper encoder's sizes, the projector's frames per token and tokens per 30-second chunk, the decoder's
// defaults (HF VoxtralConfig._default_text_config_kwargs) and the checkpoint names the weight layout
// expects. Configs the runtime cannot run are named errors; Ultravox (another Whisper-encoder model with a
// different projector) is refused by name.

import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ModelConfigError, UnsupportedModelError } from '../../src/errors';
import { parseModelConfig } from '../../src/families/registry';
import { requireVision } from '../../src/model/config';
import { weightLayout } from '../../src/model/weight-layout';
import { partOf, resolveDtype } from '../../src/model/weights/dtype';

const REAL = JSON.parse(readFileSync(resolve(import.meta.dirname, '../fixtures/models/Voxtral-Mini-3B-2507/config.json'), 'utf8'));
const ULTRAVOX = JSON.parse(
  readFileSync(resolve(import.meta.dirname, '../fixtures/models/ultravox-v0_6-llama-3_1-8b/config.json'), 'utf8'),
);

const withAudio = (patch: Record<string, unknown>) => ({ ...REAL, audio_config: { ...REAL.audio_config, ...patch } });

describe('Voxtral config', () => {
  it('Voxtral-Mini-3B-2507: a 32-layer 1280-wide encoder, 4 frames per token, 375 tokens per chunk, a 3072-wide decoder', () => {
    const c = parseModelConfig(REAL);
    expect(c.modelType).toBe('voxtral');
    expect(c.vision).toBeUndefined();
    expect(c.audio).toEqual({
      encoder: {
        hiddenSize: 1280,
        intermediateSize: 5120,
        numLayers: 32,
        numHeads: 20,
        headDim: 64,
        numMelBins: 128,
        maxSourcePositions: 1500,
        layerNormEps: 1e-5,
      },
      projector: { kind: 'stack-gelu-mlp', stack: 4, inputSize: 5120 },
      audioTokenId: 24,
      tokensPerChunk: 375,
    });
    expect(c.text).toMatchObject({
      hiddenSize: 3072,
      numLayers: 30,
      numHeads: 32,
      numKvHeads: 8,
      headDim: 128,
      ropeTheta: 1e8,
      vocabSize: 131072,
    });
    expect(c.tieWordEmbeddings).toBe(false);
    expect(() => requireVision(c)).toThrow(UnsupportedModelError);
    expect(() => requireVision(c)).toThrow(/no vision tower; it takes text and audio only/);
  });

  it("a text_config that leaves sizes out gets HF VoxtralConfig's defaults", () => {
    const c = parseModelConfig({ ...REAL, text_config: { model_type: 'llama', num_attention_heads: 32 } });
    expect(c.text).toMatchObject({
      hiddenSize: 3072,
      intermediateSize: 8192,
      numLayers: 30,
      numKvHeads: 8,
      headDim: 128,
      vocabSize: 131072,
    });
  });

  it('the weight layout names the HF checkpoint tensors (audio_tower, multi_modal_projector, language_model)', () => {
    const layout = weightLayout(parseModelConfig(REAL));
    const byName = new Map(layout.checkpoint.map((t) => [t.name, t]));
    expect(byName.get('audio_tower.conv1.weight')).toMatchObject({ shape: [1280, 128, 3], target: 'audio.conv1.w' });
    expect(byName.get('audio_tower.conv2.weight')).toMatchObject({ shape: [1280, 1280, 3], target: 'audio.conv2.w' });
    expect(byName.get('audio_tower.embed_positions.weight')).toMatchObject({ shape: [1500, 1280] });
    expect(byName.get('audio_tower.layers.31.fc1.weight')).toMatchObject({ shape: [5120, 1280] });
    expect(byName.get('multi_modal_projector.linear_1.weight')).toMatchObject({ shape: [3072, 5120] });
    expect(byName.get('multi_modal_projector.linear_2.weight')).toMatchObject({ shape: [3072, 3072] });
    expect(byName.get('language_model.model.embed_tokens.weight')).toMatchObject({ shape: [131072, 3072] });
    expect(byName.get('language_model.lm_head.weight')).toMatchObject({ shape: [131072, 3072] });
    // k_proj has no bias: the fused qkv bias takes q's and v's, and k's third stays zero.
    expect(byName.has('audio_tower.layers.0.self_attn.k_proj.bias')).toBe(false);
    expect(byName.get('audio_tower.layers.0.self_attn.v_proj.bias')).toMatchObject({
      target: 'audio.layers.0.qkv.b',
      offsetElems: 2 * 1280,
    });
    expect([...byName.keys()].some((n) => n.startsWith('model.vision_model'))).toBe(false);
  });

  it('weights are split into parts: the audio encoder and projector apart from the decoder', () => {
    expect(partOf('audio.layers.0.qkv.w')).toBe('audio');
    expect(partOf('projector.linear1.w')).toBe('audio');
    expect(partOf('text.embed')).toBe('text');
    expect(resolveDtype({ audio: 'f16', text: 'q4' })).toEqual({ vision: 'f32', audio: 'f16', text: 'q4' });
  });

  it('refuses what the runtime cannot run, by name', () => {
    expect(() => parseModelConfig(withAudio({ intermediate_size: 5000 }))).toThrow(ModelConfigError);
    expect(() => parseModelConfig(withAudio({ intermediate_size: 5000 }))).toThrow(/not a multiple of hidden_size 1280/);
    expect(() => parseModelConfig(withAudio({ intermediate_size: 7 * 1280 }))).toThrow(
      /max_source_positions 1500 is not a multiple of the projector's 7 frames/,
    );
    expect(() => parseModelConfig(withAudio({ num_attention_heads: 7 }))).toThrow(/not divisible by num_attention_heads 7/);
    expect(() => parseModelConfig(withAudio({ activation_function: 'relu' }))).toThrow(UnsupportedModelError);
    expect(() => parseModelConfig(withAudio({ scale_embedding: true }))).toThrow(UnsupportedModelError);
    expect(() => parseModelConfig({ ...REAL, projector_hidden_act: 'silu' })).toThrow(/projector_hidden_act 'silu'/);
    expect(() => parseModelConfig({ ...REAL, audio_token_id: 131072 })).toThrow(/audio_token_id 131072 is not a token id/);
    expect(() => parseModelConfig({ ...REAL, audio_config: undefined })).toThrow(/'audio_config' is missing/);
  });

  it('Ultravox (a Whisper encoder with a SwiGLU projector) is refused by name', () => {
    expect(ULTRAVOX.model_type).toBe('ultravox');
    expect(() => parseModelConfig(ULTRAVOX)).toThrow(UnsupportedModelError);
    expect(() => parseModelConfig(ULTRAVOX)).toThrow(/model_type 'ultravox' is not supported; Tessera runs idefics3, smolvlm, voxtral/);
  });
});
