// The family registry (src/families/registry.ts): every real config.json in test/fixtures/models is read by
// the family its model_type names, which sets the decoder's checkpoint names the weight layout uses; a
// model_type no family reads is refused by name, with the list of what Tessera runs.

import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { UnsupportedModelError } from '../../src/errors';
import { FAMILIES, familyOf, parseModelConfig, supportedModelTypes } from '../../src/families/registry';
import { weightLayout } from '../../src/model/weight-layout';

const fixture = (name: string) => JSON.parse(readFileSync(resolve(import.meta.dirname, `../fixtures/models/${name}/config.json`), 'utf8'));

describe('family registry', () => {
  it('each model_type belongs to exactly one family', () => {
    const types = supportedModelTypes();
    expect(types).toEqual(['idefics3', 'smolvlm', 'voxtral', 'qwen2_5_vl', 'qwen3_vl']);
    expect(new Set(types).size).toBe(types.length);
    for (const t of types) expect(FAMILIES.filter((f) => f.modelTypes.includes(t))).toHaveLength(1);
  });

  it.each([
    ['SmolVLM-256M-Instruct', 'idefics3', 'model.text_model.layers.0.self_attn.q_proj.weight', 'model.vision_model.'],
    ['SmolVLM2-500M-Video-Instruct', 'idefics3', 'model.text_model.layers.0.self_attn.q_proj.weight', 'model.vision_model.'],
    ['granite-docling-258M', 'idefics3', 'model.text_model.layers.0.self_attn.q_proj.weight', 'model.vision_model.'],
    ['Voxtral-Mini-3B-2507', 'voxtral', 'language_model.model.layers.0.self_attn.q_proj.weight', 'audio_tower.'],
    ['Qwen2.5-VL-3B-Instruct', 'qwen2_5_vl', 'model.layers.0.self_attn.q_proj.weight', 'visual.'],
    ['Qwen3-VL-2B-Instruct', 'qwen3_vl', 'model.language_model.layers.0.self_attn.q_proj.weight', 'model.visual.'],
    ['Qwen3-VL-4B-Instruct', 'qwen3_vl', 'model.language_model.layers.0.self_attn.q_proj.weight', 'model.visual.'],
  ])('%s is read by the %s family, with its checkpoint names', (name, family, decoderTensor, towerPrefix) => {
    const config = parseModelConfig(fixture(name));
    expect(config.family).toBe(family);
    expect(familyOf(config.modelType).id).toBe(family);
    const names = weightLayout(config).checkpoint.map((t) => t.name);
    expect(names).toContain(decoderTensor);
    expect(names.some((n) => n.startsWith(towerPrefix))).toBe(true);
    // Every decoder tensor is under the family's prefix, and the untied head (if any) is its lm_head name.
    const decoder = names.filter((n) => n.includes('.layers.') && !n.startsWith(towerPrefix));
    expect(decoder.every((n) => n.startsWith(`${config.decoderNames.model}.`))).toBe(true);
    if (!config.tieWordEmbeddings) expect(names).toContain(config.decoderNames.lmHead);
  });

  it("SmolVLM2-500M-Video-Instruct's vision_config leaves out sizes: they are Idefics3VisionConfig's defaults, as in transformers", () => {
    const raw = fixture('SmolVLM2-500M-Video-Instruct');
    expect(raw.vision_config.intermediate_size).toBeUndefined();
    expect(raw.vision_config.num_hidden_layers).toBeUndefined();
    expect(parseModelConfig(raw).vision).toMatchObject({
      hiddenSize: 768,
      intermediateSize: 3072,
      numLayers: 12,
      numHeads: 12,
      imageSize: 512,
      patchSize: 16,
      numChannels: 3,
      layerNormEps: 1e-6,
      imageSeqLen: 64,
    });
  });

  it('a model_type no family reads is refused by name, listing what Tessera runs', () => {
    for (const t of ['ultravox', 'qwen2_vl', undefined, 7]) {
      expect(() => familyOf(t)).toThrow(UnsupportedModelError);
    }
    // Variants it knows but does not run say what sets them apart.
    expect(() => parseModelConfig({ ...fixture('Qwen3-VL-2B-Instruct'), model_type: 'qwen3_vl_moe' })).toThrow(
      /model_type 'qwen3_vl_moe' is not supported \(Qwen3-VL with a mixture-of-experts decoder .*dense decoders\)/,
    );
    expect(() => familyOf('qwen2_vl')).toThrow(/Qwen2-VL, the generation before Qwen2\.5-VL/);
    expect(() => parseModelConfig(fixture('ultravox-v0_6-llama-3_1-8b'))).toThrow(
      /model_type 'ultravox' is not supported; Tessera runs idefics3, smolvlm, voxtral, qwen2_5_vl, qwen3_vl checkpoints \(SigLIP vision tower .*; Whisper audio encoder.*; Qwen2\.5-VL windowed ViT/,
    );
  });
});
