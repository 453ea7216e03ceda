// onnx/vision_encoder.onnx of a Qwen2.5-VL (model_type qwen2_5_vl) or Qwen3-VL (qwen3_vl) checkpoint, in the
// layout transformers.js loads (Qwen2VLForConditionalGeneration.encode_image, image_grid_thw_name
// 'image_grid_thw'), built from the safetensors weights with onnx-graph.ts:
//
//   pixel_values    f32 [num_patches, C·T·P·P]  the processor's patch rows (per image: t, h/m, w/m, m, m)
//   image_grid_thw  i64 [num_images, 3]         (t, h, w) in patches of each image, in the rows' order
//   -> image_features      f32 [num_tokens, out_hidden_size]          one row per merge unit, rows' order
//   -> deepstack_features  f32 [levels, num_tokens, out_hidden_size]  (qwen3_vl) DeepStack merger outputs,
//                                                                      block order = deepstack_visual_indexes
//
// The math is test/reference/qwen_vision.py's (HF Qwen2_5_VisionTransformerPretrainedModel, Qwen3VLVisionModel).
// Everything per patch is computed in the graph from image_grid_thw, so any grids and any number of images
// run in one call: a patch's image (from the cumulative t·h·w), its frame, row and column within the image,
// and (Qwen2.5-VL) its window of merge units. Attention runs over all patches with an additive mask: keys of
// the same image and frame (HF's cu_seqlens: one sequence per temporal index), and in Qwen2.5-VL's window
// layers also of the same window (window_size / merge / patch units a side, cut from each frame's top left,
// the last ones partial; HF's cu_window_seqlens). Norms, MLPs and the rotary are per patch and masked
// attention does not depend on the rows' order, so HF's window reordering (and its undoing) is not needed:
// the rows stay in the processor's order throughout. Index arithmetic is float32 (exact for integers below
// 2^24) so that the WebGPU EP can run it too. Attention scores are [heads, N, N] for N patches in all.

import { GraphBuilder } from './onnx-graph';
import { activation, F32_MIN, geluErf, layerNorm, linear, rmsNorm, rotateHalf, transposed, type WeightReader } from './onnx-layers';

type Config = Record<string, any>;

/** HF builds every norm of both towers with eps 1e-6. */
const EPS = 1e-6;

const KINDS = ['qwen2_5_vl', 'qwen3_vl'] as const;

/** How the graph is cut for where it runs. */
export interface QwenVisionGraphOptions {
  /**
   * Attention in this many groups of heads, one after another (default 1: all heads at once). Scores are
   * [heads, N, N] float32: 1.46 GB for Qwen2.5-VL's 16 heads over a 1280 × 720 image's 4784 patches, over
   * a WebGPU adapter's 1 GiB maxBufferSize on SwiftShader; per group they are heads / groups of that. The
   * math is the same (each head attends alone).
   */
  headGroups?: number;
}

export function qwenVisionEncoderGraph(config: Config, read: WeightReader, options: QwenVisionGraphOptions = {}): GraphBuilder {
  const kind = config.model_type as (typeof KINDS)[number];
  if (!KINDS.includes(kind))
    throw new Error(`qwen vision ONNX: model_type '${config.model_type}' is not exported (${KINDS.join(', ')} are)`);
  const qwen3 = kind !== 'qwen2_5_vl';
  const v: Config | undefined = config.vision_config;
  if (!v) throw new Error('qwen vision ONNX: config.json has no vision_config');
  const need = (key: string): number => {
    const x = v[key];
    if (typeof x !== 'number' || !Number.isInteger(x) || x <= 0)
      throw new Error(`qwen vision ONNX: vision_config.${key} is ${x}, not a positive integer`);
    return x;
  };
  const depth = need('depth');
  const D = need('hidden_size');
  const heads = need('num_heads');
  const I = need('intermediate_size');
  const P = need('patch_size');
  const Tp = need('temporal_patch_size');
  const m = need('spatial_merge_size');
  const O = need('out_hidden_size');
  const C: number = v.in_channels ?? v.in_chans ?? 3;
  const R = C * Tp * P * P;
  const hd = D / heads;
  const act: string = v.hidden_act ?? (qwen3 ? 'gelu_pytorch_tanh' : 'silu');
  if (!Number.isInteger(hd) || hd % 4 !== 0)
    throw new Error(`qwen vision ONNX: head_dim ${hd} (hidden_size / num_heads) is not a multiple of 4`);
  const unit = m * m;

  // Window layers (Qwen2.5-VL): windows of wu × wu merge units; the other layers attend over each frame.
  let wu = 0;
  let fullLayers: number[] = [];
  if (!qwen3) {
    const windowSize = need('window_size');
    wu = Math.floor(windowSize / m / P);
    if (wu < 1) throw new Error(`qwen vision ONNX: window_size ${windowSize} is smaller than one merge unit (${m * P} pixels)`);
    fullLayers = v.fullatt_block_indexes ?? [];
    if (!Array.isArray(fullLayers)) throw new Error('qwen vision ONNX: vision_config.fullatt_block_indexes is not a list');
  }
  // DeepStack taps (Qwen3-VL): HF lists the levels in block order, which is this order when it increases.
  const taps: number[] = qwen3 ? (v.deepstack_visual_indexes ?? []) : [];
  if (taps.some((t, i) => !Number.isInteger(t) || t < 0 || t >= depth || (i > 0 && t <= taps[i - 1]!)))
    throw new Error(
      `qwen vision ONNX: deepstack_visual_indexes ${JSON.stringify(taps)} are not increasing block indexes below depth ${depth}`,
    );
  let G = 0;
  if (qwen3) {
    const positions = need('num_position_embeddings');
    G = Math.round(Math.sqrt(positions));
    if (G * G !== positions) throw new Error(`qwen vision ONNX: num_position_embeddings ${positions} is not a square`);
  }

  // Checkpoints name the tower 'model.visual.' (Qwen3-VL, newer exports) or 'visual.' (Qwen2.5-VL's own).
  let prefix = 'model.visual.';
  try {
    read(`${prefix}patch_embed.proj.weight`);
  } catch {
    prefix = 'visual.';
  }
  const at = (name: string) => `${prefix}${name}`;

  const g = new GraphBuilder('vision_encoder');
  const pixels = g.input('pixel_values', 'float', ['num_patches', R]);
  const gridThw = g.input('image_grid_thw', 'int64', ['num_images', 3]);

  // ---- per-patch indices (float32 vectors [N]) ----
  const f = (x: number) => g.floats([x]);
  const add = (a: string, b: string) => g.op('Add', [a, b]);
  const sub = (a: string, b: string) => g.op('Sub', [a, b]);
  const mul = (a: string, b: string) => g.op('Mul', [a, b]);
  // ⌊a / b⌋ of non-negative integers: a + ½ keeps the quotient ≥ 1 / (2b) away from an integer, so an
  // inexact division (WebGPU's) still floors right.
  const floorDiv = (a: string, b: string) => g.op('Floor', [g.op('Div', [add(a, f(0.5)), b])]);
  const col = (x: string, i: number) => g.op('Gather', [x, g.ints([i], [])], { axis: 1 });
  const grid = g.op('Cast', [gridThw], { to: 1 });
  const gT = col(grid, 0);
  const gH = col(grid, 1);
  const gW = col(grid, 2);
  const perFrame = mul(gH, gW);
  const ends = g.op('CumSum', [mul(gT, perFrame), g.ints([0], [])]);
  const starts = sub(ends, mul(gT, perFrame));
  const numPatches = g.op('Cast', [g.op('Gather', [g.op('Shape', [pixels]), g.ints([0], [])])], { to: 1 });
  const p = g.op('Range', [f(0), numPatches, f(1)]);
  // inImage [N, B] one-hot of each patch's image; its product with a [B, k] table reads each patch's image
  // attributes (exact: one 1 a row).
  const pCol = g.op('Unsqueeze', [p, g.ints([1])]);
  const row0 = (x: string) => g.op('Unsqueeze', [x, g.ints([0])]);
  const inImage = g.op('Cast', [g.op('And', [g.op('GreaterOrEqual', [pCol, row0(starts)]), g.op('Less', [pCol, row0(ends)])])], {
    to: 1,
  });
  const colOf = (x: string) => g.op('Unsqueeze', [x, g.ints([1])]);
  const attrs = g.op('MatMul', [inImage, g.op('Concat', [colOf(starts), colOf(gH), colOf(gW)], { axis: 1 })]);
  const start = col(attrs, 0);
  const h = col(attrs, 1);
  const w = col(attrs, 2);
  const hw = mul(h, w);
  const q = sub(p, start); // index within the image
  const frame = floorDiv(q, hw);
  const s = sub(q, mul(frame, hw)); // index within the frame
  const mm = f(m);
  const u = floorDiv(s, f(unit)); // merge unit within the frame
  const k = sub(s, mul(u, f(unit))); // patch within the unit
  const lw = floorDiv(w, mm); // merge units a row
  const ur = floorDiv(u, lw);
  const uc = sub(u, mul(ur, lw));
  const kr = floorDiv(k, mm);
  const row = add(mul(ur, mm), kr);
  const column = add(mul(uc, mm), sub(k, mul(kr, mm)));
  const frameKey = add(start, mul(frame, hw)); // the frame's first patch: unique over the batch

  // ---- attention masks [N, N] ----
  const same = (x: string) => g.op('Equal', [colOf(x), row0(x)]);
  const bias = (keep: string) => g.op('Where', [keep, f(0), f(F32_MIN)]);
  const sameFrame = same(frameKey);
  const frameBias = bias(sameFrame);
  const windowBias =
    !qwen3 && fullLayers.length < depth
      ? bias(g.op('And', [g.op('And', [sameFrame, same(floorDiv(ur, f(wu)))]), same(floorDiv(uc, f(wu)))]))
      : '';

  // ---- 2-D rotary: cos, sin [N, 1, hd]; the head's quarters turn by row, column, row, column ----
  // inv_freq as torch forms it in float32: 1 / 10000^(arange(0, hd/2, 2) / (hd/2)).
  const half = hd / 2;
  const inv = Float32Array.from({ length: hd / 4 }, (_, i) =>
    Math.fround(1 / Math.fround(10000 ** Math.fround(Math.fround(2 * i) / half))),
  );
  const invFreq = g.weight('rotary.inv_freq', inv, [hd / 4]);
  const angles = (x: string) => g.op('Mul', [colOf(x), invFreq]);
  const [aRow, aCol] = [angles(row), angles(column)];
  const emb = g.op('Unsqueeze', [g.op('Concat', [aRow, aCol, aRow, aCol], { axis: 1 }), g.ints([1])]);
  const cos = g.op('Cos', [emb]);
  const sin = g.op('Sin', [emb]);
  const rope = rotateHalf(g, hd, cos, sin);

  // ---- patch embedding (Conv3d, kernel = stride: a product over the patch row) ----
  const pw = read(at('patch_embed.proj.weight'));
  if (pw.shape[0] !== D || pw.data.length !== D * R)
    throw new Error(`qwen vision ONNX: patch_embed.proj.weight is [${pw.shape}], not [${D}, ${C}, ${Tp}, ${P}, ${P}]`);
  const pwT = transposed({ data: pw.data, shape: [D, R] });
  let x = g.op('MatMul', [pixels, g.weight(at('patch_embed.proj.weight'), pwT.data, pwT.dims)]);
  if (qwen3) {
    const pb = read(at('patch_embed.proj.bias'));
    x = add(x, g.weight(at('patch_embed.proj.bias'), pb.data, pb.shape));
    x = add(x, positionEmbedding(g, read, at('pos_embed.weight'), G, D, row, column, h, w));
  }

  // ---- blocks ----
  const fc1Shape = read(at(`blocks.0.mlp.${qwen3 ? 'linear_fc1' : 'gate_proj'}.weight`)).shape;
  if (fc1Shape[0] !== I || fc1Shape[1] !== D)
    throw new Error(`qwen vision ONNX: the MLP's first weight is [${fc1Shape}], not [${I}, ${D}] (intermediate_size, hidden_size)`);
  const scale = f(hd ** -0.5);
  const groups = options.headGroups ?? 1;
  if (!Number.isInteger(groups) || groups < 1 || heads % groups !== 0)
    throw new Error(`qwen vision ONNX: headGroups ${groups} does not divide the ${heads} heads`);
  const groupSizes = groups === 1 ? '' : g.ints(Array.from({ length: groups }, () => heads / groups));
  const heads3 = g.ints([0, heads, hd]);
  const flat = g.ints([0, D]);
  const norm = (y: string, name: string) => (qwen3 ? layerNorm(g, read, y, at(name), EPS) : rmsNorm(g, read, y, at(name), EPS));
  const fold = (y: string) => g.op('Reshape', [y, g.ints([-1, unit * D])]);
  const levels: string[] = [];
  for (let i = 0; i < depth; i++) {
    const b = `blocks.${i}.`;
    const y = norm(x, `${b}norm1`);
    const qkv = linear(g, read, y, at(`${b}attn.qkv`), true);
    const [qh, kh, vh] = g.opN('Split', [qkv, g.ints([D, D, D])], 3, { axis: -1 }).map((t) => g.op('Reshape', [t, heads3]));
    const qT = g.op('Transpose', [rope(qh!)], { perm: [1, 0, 2] }); // [heads, N, hd]
    const kT = g.op('Transpose', [rope(kh!)], { perm: [1, 2, 0] }); // [heads, hd, N]
    const vT = g.op('Transpose', [vh!], { perm: [1, 0, 2] });
    const mask = qwen3 || fullLayers.includes(i) ? frameBias : windowBias;
    const attend = (qs: string, ks: string, vs: string) =>
      g.op('MatMul', [g.op('Softmax', [add(mul(g.op('MatMul', [qs, ks]), scale), mask)], { axis: -1 }), vs]);
    const split = (t: string) => g.opN('Split', [t, groupSizes], groups, { axis: 0 });
    const o =
      groups === 1
        ? attend(qT, kT, vT)
        : g.op(
            'Concat',
            zip3(split(qT), split(kT), split(vT)).map(([qs, ks, vs]) => attend(qs, ks, vs)),
            { axis: 0 },
          );
    const merged = g.op('Reshape', [g.op('Transpose', [o], { perm: [1, 0, 2] }), flat]);
    x = add(x, linear(g, read, merged, at(`${b}attn.proj`), true));
    const y2 = norm(x, `${b}norm2`);
    if (qwen3) {
      const hidden = activation(g, linear(g, read, y2, at(`${b}mlp.linear_fc1`), true), act, 'qwen vision ONNX');
      x = add(x, linear(g, read, hidden, at(`${b}mlp.linear_fc2`), true));
    } else {
      const gate = activation(g, linear(g, read, y2, at(`${b}mlp.gate_proj`), true), act, 'qwen vision ONNX');
      const up = linear(g, read, y2, at(`${b}mlp.up_proj`), true);
      x = add(x, linear(g, read, mul(gate, up), at(`${b}mlp.down_proj`), true));
    }
    const tap = taps.indexOf(i);
    if (tap >= 0) {
      // DeepStack merger: fold the merge unit's m² rows into one, then LayerNorm over the folded row.
      const d = `deepstack_merger_list.${tap}.`;
      const z = layerNorm(g, read, fold(x), at(`${d}norm`), EPS);
      const hidden = geluErf(g, linear(g, read, z, at(`${d}linear_fc1`), true));
      levels.push(linear(g, read, hidden, at(`${d}linear_fc2`), true));
    }
  }

  // ---- merger: norm each patch, fold a merge unit into one row, Linear + exact GELU + Linear ----
  const [mergerNorm, fc1, fc2] = qwen3
    ? ['merger.norm', 'merger.linear_fc1', 'merger.linear_fc2']
    : ['merger.ln_q', 'merger.mlp.0', 'merger.mlp.2'];
  const z = fold(norm(x, mergerNorm));
  const features = linear(g, read, geluErf(g, linear(g, read, z, at(fc1), true)), at(fc2), true);
  g.output(features, 'image_features', 'float', ['num_tokens', O]);
  if (qwen3) {
    // No taps: an empty [0, num_tokens, O] (Concat needs an input).
    const stacked =
      levels.length > 0
        ? g.op(
            'Concat',
            levels.map((l) => g.op('Unsqueeze', [l, g.ints([0])])),
            { axis: 0 },
          )
        : g.op('Slice', [g.op('Unsqueeze', [features, g.ints([0])]), g.ints([0]), g.ints([0]), g.ints([0])]);
    g.output(stacked, 'deepstack_features', 'float', [levels.length, 'num_tokens', O]);
  }
  return g;
}

function zip3<T>(a: readonly T[], b: readonly T[], c: readonly T[]): Array<[T, T, T]> {
  return a.map((x, i) => [x, b[i]!, c[i]!]);
}

/**
 * Qwen3-VL's learned positions at each patch (HF fast_pos_embed_interpolate): the G × G table sampled
 * bilinearly at (linspace(0, G - 1, h)[row], linspace(0, G - 1, w)[column]) of the patch's image, with
 * torch's float32 linspace (first half counted up from 0, second half down from G - 1), corner weights in
 * float32, the four corners added in order. row, column, h, w: float32 [N].
 */
function positionEmbedding(
  g: GraphBuilder,
  read: WeightReader,
  name: string,
  G: number,
  D: number,
  row: string,
  column: string,
  h: string,
  w: string,
): string {
  const table = read(name);
  if (table.data.length !== G * G * D) throw new Error(`qwen vision ONNX: ${name} is [${table.shape}], not [${G * G}, ${D}]`);
  const tableName = g.weight(name, table.data, [G * G, D]);
  const f = (x: number) => g.floats([x]);
  const last = f(G - 1);
  const linspace = (i: string, n: string) => {
    const n1 = g.op('Sub', [n, f(1)]);
    const step = g.op('Div', [last, g.op('Max', [n1, f(1)])]);
    const up = g.op('Mul', [step, i]);
    const down = g.op('Sub', [last, g.op('Mul', [step, g.op('Sub', [n1, i])])]);
    // i < ⌊n / 2⌋  ⟺  2i + 2 ≤ n
    const lower = g.op('LessOrEqual', [g.op('Add', [g.op('Mul', [i, f(2)]), f(2)]), n]);
    return g.op('Where', [g.op('Equal', [n, f(1)]), f(0), g.op('Where', [lower, up, down])]);
  };
  const hs = linspace(row, h);
  const ws = linspace(column, w);
  const hf = g.op('Floor', [hs]);
  const wf = g.op('Floor', [ws]);
  const hc = g.op('Min', [g.op('Add', [hf, f(1)]), last]);
  const wc = g.op('Min', [g.op('Add', [wf, f(1)]), last]);
  const dh = g.op('Sub', [hs, hf]);
  const dw = g.op('Sub', [ws, wf]);
  const ah = g.op('Sub', [f(1), dh]);
  const aw = g.op('Sub', [f(1), dw]);
  const corner = (r: string, c: string, wr: string, wcol: string) => {
    const index = g.op('Cast', [g.op('Add', [g.op('Mul', [r, f(G)]), c])], { to: 7 });
    const weight = g.op('Unsqueeze', [g.op('Mul', [wr, wcol]), g.ints([1])]);
    return g.op('Mul', [g.op('Gather', [tableName, index], { axis: 0 }), weight]);
  };
  let pos = corner(hf, wf, ah, aw);
  pos = g.op('Add', [pos, corner(hf, wc, ah, dw)]);
  pos = g.op('Add', [pos, corner(hc, wf, dh, aw)]);
  return g.op('Add', [pos, corner(hc, wc, dh, dw)]);
}
