// Which tensors a checkpoint must hold (names and shapes implied by config.json) and where each one
// lands on the GPU. Some checkpoint tensors are fused on upload so one matmul does the work of several:
//
//   GPU tensor                 rows filled from
//   vision.layers.i.qkv.w      [0, D) q_proj | [D, 2D) k_proj | [2D, 3D) v_proj      (+ the same for biases)
//   audio.layers.i.qkv.w       the same; audio.layers.i.qkv.b has no k part in the checkpoint (k_proj has
//                              no bias): those D values stay zero
//   text.layers.i.qkv          [0, nH*hd) q_proj | then k_proj (nKV*hd rows) | then v_proj (nKV*hd rows)
//   text.layers.i.qkv_b        the q, k and v biases in the same order (decoders with qkvBias: Qwen2)
//   text.layers.i.qk_norm      [0, hd) q_norm | [hd, 2hd) k_norm (decoders with qkNorm: Qwen3); 1-D, so
//                              no dtype packs it
//   text.layers.i.gate_up      [0, I) gate_proj | [I, 2I) up_proj
//
// The patch conv weight [D, C, P, P] is used as [D, C*P*P], the audio conv weights [D, Cin, 3] as
// [D, Cin*3] (same bytes). With tied embeddings the LM head is the token embedding matrix and the
// checkpoint has no lm_head.weight. The decoder's checkpoint names are its family's
// (ModelConfig.decoderNames); the towers' are those of the checkpoints that have them (src/families/*/config.ts).

import type { AudioConfig, ModelConfig, Qwen25VisionConfig, Qwen3VisionConfig, VisionConfig } from './config';

export interface GpuWeightSpec {
  key: string;
  shape: number[];
  /**
   * Its kernels read it a part of rows at a time, so it may be split when larger than one binding
   * (weights/row-split.ts): the token embedding and the LM head.
   */
  rowSplit?: boolean;
  /**
   * Its kernels read it a part of rows at a time, so its checkpoint tensors may be held in different
   * formats, a part each (a GGUF file's q, k and v of different block types: weights/gguf/gguf-load.ts).
   */
  formatParts?: boolean;
}

export interface CheckpointTensorSpec {
  /** Name in the checkpoint. */
  name: string;
  shape: number[];
  /** GPU tensor it is written into. */
  target: string;
  /** Where inside the target it starts, in elements. */
  offsetElems: number;
}

export interface WeightLayout {
  gpu: GpuWeightSpec[];
  checkpoint: CheckpointTensorSpec[];
  /** GPU keys that are another key's tensor (tied LM head). */
  aliases: Record<string, string>;
  /**
   * GPU keys that become an alias of another key when the checkpoint lacks all their tensors (an LM head
   * tied only in text_config: ModelConfig.tieIfHeadMissing).
   */
  aliasIfMissing?: Record<string, string>;
  /** ModelConfig.checkpointSpellings: alternative prefixes of the checkpoint names (weights.ts respell). */
  spellings?: ReadonlyArray<readonly [string, string]>;
}

const numel = (shape: readonly number[]) => shape.reduce((a, b) => a * b, 1);

type AddTensor = (key: string, shape: number[], parts: Array<[name: string | null, shape: number[]]>) => void;

/** SigLIP tower + pixel-shuffle connector (HF Idefics3). */
function addVision(v: VisionConfig, H: number, add: AddTensor): void {
  const D = v.hiddenSize;
  const vp = 'model.vision_model';
  add(
    'vision.patch.w',
    [D, v.numChannels * v.patchSize * v.patchSize],
    [[`${vp}.embeddings.patch_embedding.weight`, [D, v.numChannels, v.patchSize, v.patchSize]]],
  );
  add('vision.patch.b', [D], [[`${vp}.embeddings.patch_embedding.bias`, [D]]]);
  add('vision.pos', [v.patchesPerSide ** 2, D], [[`${vp}.embeddings.position_embedding.weight`, [v.patchesPerSide ** 2, D]]]);
  for (let i = 0; i < v.numLayers; i++) {
    const p = `${vp}.encoder.layers.${i}`;
    const k = `vision.layers.${i}`;
    add(`${k}.ln1.w`, [D], [[`${p}.layer_norm1.weight`, [D]]]);
    add(`${k}.ln1.b`, [D], [[`${p}.layer_norm1.bias`, [D]]]);
    add(
      `${k}.qkv.w`,
      [3 * D, D],
      ['q', 'k', 'v'].map((x) => [`${p}.self_attn.${x}_proj.weight`, [D, D]]),
    );
    add(
      `${k}.qkv.b`,
      [3 * D],
      ['q', 'k', 'v'].map((x) => [`${p}.self_attn.${x}_proj.bias`, [D]]),
    );
    add(`${k}.o.w`, [D, D], [[`${p}.self_attn.out_proj.weight`, [D, D]]]);
    add(`${k}.o.b`, [D], [[`${p}.self_attn.out_proj.bias`, [D]]]);
    add(`${k}.ln2.w`, [D], [[`${p}.layer_norm2.weight`, [D]]]);
    add(`${k}.ln2.b`, [D], [[`${p}.layer_norm2.bias`, [D]]]);
    add(`${k}.fc1.w`, [v.intermediateSize, D], [[`${p}.mlp.fc1.weight`, [v.intermediateSize, D]]]);
    add(`${k}.fc1.b`, [v.intermediateSize], [[`${p}.mlp.fc1.bias`, [v.intermediateSize]]]);
    add(`${k}.fc2.w`, [D, v.intermediateSize], [[`${p}.mlp.fc2.weight`, [D, v.intermediateSize]]]);
    add(`${k}.fc2.b`, [D], [[`${p}.mlp.fc2.bias`, [D]]]);
  }
  add('vision.post_ln.w', [D], [[`${vp}.post_layernorm.weight`, [D]]]);
  add('vision.post_ln.b', [D], [[`${vp}.post_layernorm.bias`, [D]]]);

  const connectorIn = D * v.scaleFactor ** 2;
  add('connector.w', [H, connectorIn], [['model.connector.modality_projection.proj.weight', [H, connectorIn]]]);
}

/**
 * Qwen2.5-VL's vision tower (HF `Qwen2_5_VisionTransformerPretrainedModel`): the Conv3d patch weight
 * [D, C, T, P, P] read as [D, C·T·P·P], RMSNorm weights without biases, q|k|v fused with biases,
 * gate|up fused with biases, the merger's RMSNorm and two linears.
 */
function addQwen25Vision(v: Qwen25VisionConfig, add: AddTensor): void {
  const D = v.hiddenSize;
  const I = v.intermediateSize;
  const p = v.prefix;
  const row = v.inChannels * v.temporalPatchSize * v.patchSize ** 2;
  add('vision.patch.w', [D, row], [[`${p}.patch_embed.proj.weight`, [D, v.inChannels, v.temporalPatchSize, v.patchSize, v.patchSize]]]);
  for (let i = 0; i < v.numLayers; i++) {
    const b = `${p}.blocks.${i}`;
    const k = `vision.layers.${i}`;
    add(`${k}.ln1.w`, [D], [[`${b}.norm1.weight`, [D]]]);
    add(`${k}.qkv.w`, [3 * D, D], [[`${b}.attn.qkv.weight`, [3 * D, D]]]);
    add(`${k}.qkv.b`, [3 * D], [[`${b}.attn.qkv.bias`, [3 * D]]]);
    add(`${k}.o.w`, [D, D], [[`${b}.attn.proj.weight`, [D, D]]]);
    add(`${k}.o.b`, [D], [[`${b}.attn.proj.bias`, [D]]]);
    add(`${k}.ln2.w`, [D], [[`${b}.norm2.weight`, [D]]]);
    add(
      `${k}.gate_up.w`,
      [2 * I, D],
      [
        [`${b}.mlp.gate_proj.weight`, [I, D]],
        [`${b}.mlp.up_proj.weight`, [I, D]],
      ],
    );
    add(
      `${k}.gate_up.b`,
      [2 * I],
      [
        [`${b}.mlp.gate_proj.bias`, [I]],
        [`${b}.mlp.up_proj.bias`, [I]],
      ],
    );
    add(`${k}.down.w`, [D, I], [[`${b}.mlp.down_proj.weight`, [D, I]]]);
    add(`${k}.down.b`, [D], [[`${b}.mlp.down_proj.bias`, [D]]]);
  }
  const M = D * v.mergeSize ** 2;
  add('vision.merger.ln.w', [D], [[`${p}.merger.ln_q.weight`, [D]]]);
  add('vision.merger.fc1.w', [M, M], [[`${p}.merger.mlp.0.weight`, [M, M]]]);
  add('vision.merger.fc1.b', [M], [[`${p}.merger.mlp.0.bias`, [M]]]);
  add('vision.merger.fc2.w', [v.outHiddenSize, M], [[`${p}.merger.mlp.2.weight`, [v.outHiddenSize, M]]]);
  add('vision.merger.fc2.b', [v.outHiddenSize], [[`${p}.merger.mlp.2.bias`, [v.outHiddenSize]]]);
}

/**
 * Qwen3-VL's vision tower (HF `Qwen3VLVisionModel`): the Conv3d patch weight read as [D, C·T·P·P] with
 * its bias, the learned position grid (1-D here, so no dtype packs it: the interpolation reads it as f32),
 * LayerNorm blocks with the encoder layer's keys (fused q|k|v, fc1, fc2), the merger (LayerNorm over D
 * before the fold) and one DeepStack merger per tap (LayerNorm over the folded m²·D row).
 */
function addQwen3Vision(v: Qwen3VisionConfig, add: AddTensor): void {
  const D = v.hiddenSize;
  const I = v.intermediateSize;
  const p = v.prefix;
  const row = v.inChannels * v.temporalPatchSize * v.patchSize ** 2;
  add('vision.patch.w', [D, row], [[`${p}.patch_embed.proj.weight`, [D, v.inChannels, v.temporalPatchSize, v.patchSize, v.patchSize]]]);
  add('vision.patch.b', [D], [[`${p}.patch_embed.proj.bias`, [D]]]);
  add('vision.pos', [v.gridPerSide ** 2 * D], [[`${p}.pos_embed.weight`, [v.gridPerSide ** 2, D]]]);
  for (let i = 0; i < v.numLayers; i++) {
    const b = `${p}.blocks.${i}`;
    const k = `vision.layers.${i}`;
    add(`${k}.ln1.w`, [D], [[`${b}.norm1.weight`, [D]]]);
    add(`${k}.ln1.b`, [D], [[`${b}.norm1.bias`, [D]]]);
    add(`${k}.qkv.w`, [3 * D, D], [[`${b}.attn.qkv.weight`, [3 * D, D]]]);
    add(`${k}.qkv.b`, [3 * D], [[`${b}.attn.qkv.bias`, [3 * D]]]);
    add(`${k}.o.w`, [D, D], [[`${b}.attn.proj.weight`, [D, D]]]);
    add(`${k}.o.b`, [D], [[`${b}.attn.proj.bias`, [D]]]);
    add(`${k}.ln2.w`, [D], [[`${b}.norm2.weight`, [D]]]);
    add(`${k}.ln2.b`, [D], [[`${b}.norm2.bias`, [D]]]);
    add(`${k}.fc1.w`, [I, D], [[`${b}.mlp.linear_fc1.weight`, [I, D]]]);
    add(`${k}.fc1.b`, [I], [[`${b}.mlp.linear_fc1.bias`, [I]]]);
    add(`${k}.fc2.w`, [D, I], [[`${b}.mlp.linear_fc2.weight`, [D, I]]]);
    add(`${k}.fc2.b`, [D], [[`${b}.mlp.linear_fc2.bias`, [D]]]);
  }
  const M = D * v.mergeSize ** 2;
  const merger = (key: string, name: string, normWidth: number) => {
    add(`${key}.ln.w`, [normWidth], [[`${name}.norm.weight`, [normWidth]]]);
    add(`${key}.ln.b`, [normWidth], [[`${name}.norm.bias`, [normWidth]]]);
    add(`${key}.fc1.w`, [M, M], [[`${name}.linear_fc1.weight`, [M, M]]]);
    add(`${key}.fc1.b`, [M], [[`${name}.linear_fc1.bias`, [M]]]);
    add(`${key}.fc2.w`, [v.outHiddenSize, M], [[`${name}.linear_fc2.weight`, [v.outHiddenSize, M]]]);
    add(`${key}.fc2.b`, [v.outHiddenSize], [[`${name}.linear_fc2.bias`, [v.outHiddenSize]]]);
  };
  merger('vision.merger', `${p}.merger`, D);
  for (let i = 0; i < v.deepstackTaps.length; i++) merger(`vision.deepstack.${i}`, `${p}.deepstack_merger_list.${i}`, M);
}

/** Whisper encoder + frame-stacking projector (HF Voxtral). */
function addAudio(a: AudioConfig, H: number, add: AddTensor): void {
  const e = a.encoder;
  const D = e.hiddenSize;
  const p = 'audio_tower';
  add('audio.conv1.w', [D, e.numMelBins * 3], [[`${p}.conv1.weight`, [D, e.numMelBins, 3]]]);
  add('audio.conv1.b', [D], [[`${p}.conv1.bias`, [D]]]);
  add('audio.conv2.w', [D, D * 3], [[`${p}.conv2.weight`, [D, D, 3]]]);
  add('audio.conv2.b', [D], [[`${p}.conv2.bias`, [D]]]);
  add('audio.pos', [e.maxSourcePositions, D], [[`${p}.embed_positions.weight`, [e.maxSourcePositions, D]]]);
  for (let i = 0; i < e.numLayers; i++) {
    const l = `${p}.layers.${i}`;
    const k = `audio.layers.${i}`;
    add(`${k}.ln1.w`, [D], [[`${l}.self_attn_layer_norm.weight`, [D]]]);
    add(`${k}.ln1.b`, [D], [[`${l}.self_attn_layer_norm.bias`, [D]]]);
    add(
      `${k}.qkv.w`,
      [3 * D, D],
      ['q', 'k', 'v'].map((x) => [`${l}.self_attn.${x}_proj.weight`, [D, D]]),
    );
    add(
      `${k}.qkv.b`,
      [3 * D],
      [
        [`${l}.self_attn.q_proj.bias`, [D]],
        [null, [D]],
        [`${l}.self_attn.v_proj.bias`, [D]],
      ],
    );
    add(`${k}.o.w`, [D, D], [[`${l}.self_attn.out_proj.weight`, [D, D]]]);
    add(`${k}.o.b`, [D], [[`${l}.self_attn.out_proj.bias`, [D]]]);
    add(`${k}.ln2.w`, [D], [[`${l}.final_layer_norm.weight`, [D]]]);
    add(`${k}.ln2.b`, [D], [[`${l}.final_layer_norm.bias`, [D]]]);
    add(`${k}.fc1.w`, [e.intermediateSize, D], [[`${l}.fc1.weight`, [e.intermediateSize, D]]]);
    add(`${k}.fc1.b`, [e.intermediateSize], [[`${l}.fc1.bias`, [e.intermediateSize]]]);
    add(`${k}.fc2.w`, [D, e.intermediateSize], [[`${l}.fc2.weight`, [D, e.intermediateSize]]]);
    add(`${k}.fc2.b`, [D], [[`${l}.fc2.bias`, [D]]]);
  }
  add('audio.post_ln.w', [D], [[`${p}.layer_norm.weight`, [D]]]);
  add('audio.post_ln.b', [D], [[`${p}.layer_norm.bias`, [D]]]);
  const In = a.projector.inputSize;
  add('projector.linear1.w', [H, In], [['multi_modal_projector.linear_1.weight', [H, In]]]);
  add('projector.linear2.w', [H, H], [['multi_modal_projector.linear_2.weight', [H, H]]]);
}

export function weightLayout(config: ModelConfig): WeightLayout {
  const gpu: GpuWeightSpec[] = [];
  const checkpoint: CheckpointTensorSpec[] = [];
  const aliases: Record<string, string> = {};

  /** A GPU tensor filled by the listed checkpoint tensors, back to back (null: a gap of that shape left zero). */
  const add: AddTensor = (key, shape, parts) => {
    gpu.push({ key, shape });
    let offset = 0;
    for (const [name, partShape] of parts) {
      if (name !== null) checkpoint.push({ name, shape: partShape, target: key, offsetElems: offset });
      offset += numel(partShape);
    }
    if (offset !== numel(shape)) throw new Error(`weight layout: ${key} parts hold ${offset} elements, tensor ${numel(shape)}`);
  };

  if (config.vision) addVision(config.vision, config.text.hiddenSize, add);
  if (config.audio) addAudio(config.audio, config.text.hiddenSize, add);
  if (config.qwenVision?.kind === 'qwen2_5_vl') addQwen25Vision(config.qwenVision, add);
  if (config.qwenVision?.kind === 'qwen3_vl') addQwen3Vision(config.qwenVision, add);

  const t = config.text;
  const H = t.hiddenSize;
  const tp = config.decoderNames.model;
  const lmHead = config.decoderNames.lmHead;
  add('text.embed', [t.vocabSize, H], [[`${tp}.embed_tokens.weight`, [t.vocabSize, H]]]);
  const qRows = t.numHeads * t.headDim;
  const kvRows = t.numKvHeads * t.headDim;
  for (let i = 0; i < t.numLayers; i++) {
    const p = `${tp}.layers.${i}`;
    const k = `text.layers.${i}`;
    add(`${k}.ln1`, [H], [[`${p}.input_layernorm.weight`, [H]]]);
    add(
      `${k}.qkv`,
      [qRows + 2 * kvRows, H],
      [
        [`${p}.self_attn.q_proj.weight`, [qRows, H]],
        [`${p}.self_attn.k_proj.weight`, [kvRows, H]],
        [`${p}.self_attn.v_proj.weight`, [kvRows, H]],
      ],
    );
    if (t.qkvBias) {
      add(
        `${k}.qkv_b`,
        [qRows + 2 * kvRows],
        [
          [`${p}.self_attn.q_proj.bias`, [qRows]],
          [`${p}.self_attn.k_proj.bias`, [kvRows]],
          [`${p}.self_attn.v_proj.bias`, [kvRows]],
        ],
      );
    }
    if (t.qkNorm) {
      add(
        `${k}.qk_norm`,
        [2 * t.headDim],
        [
          [`${p}.self_attn.q_norm.weight`, [t.headDim]],
          [`${p}.self_attn.k_norm.weight`, [t.headDim]],
        ],
      );
    }
    add(`${k}.o`, [H, qRows], [[`${p}.self_attn.o_proj.weight`, [H, qRows]]]);
    add(`${k}.ln2`, [H], [[`${p}.post_attention_layernorm.weight`, [H]]]);
    add(
      `${k}.gate_up`,
      [2 * t.intermediateSize, H],
      [
        [`${p}.mlp.gate_proj.weight`, [t.intermediateSize, H]],
        [`${p}.mlp.up_proj.weight`, [t.intermediateSize, H]],
      ],
    );
    add(`${k}.down`, [H, t.intermediateSize], [[`${p}.mlp.down_proj.weight`, [H, t.intermediateSize]]]);
  }
  add('text.norm', [H], [[`${tp}.norm.weight`, [H]]]);
  if (config.tieWordEmbeddings) aliases['text.lm_head'] = 'text.embed';
  else add('text.lm_head', [t.vocabSize, H], [[lmHead, [t.vocabSize, H]]]);
  for (const w of gpu) if (w.key === 'text.embed' || w.key === 'text.lm_head') w.rowSplit = true;
  for (const w of gpu) if (/^text\.layers\.\d+\.qkv$/.test(w.key)) w.formatParts = true;
  const aliasIfMissing = config.tieIfHeadMissing ? { 'text.lm_head': 'text.embed' } : undefined;
  return { gpu, checkpoint, aliases, aliasIfMissing, spellings: config.checkpointSpellings };
}
