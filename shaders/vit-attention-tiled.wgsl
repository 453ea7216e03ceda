// vit-attention-tiled.wgsl: the 'tiled' plan of bidirectional ViT attention (src/kernels/vit-attention.ts),
// flash-style for GPUs: softmax(q kᵀ * scale + mask) v as vit-attention.wgsl computes it (HF
// `SiglipAttention`, eager; masked keys get no weight), but one WORKGROUP per (image, head, block of WG
// queries). The workgroup walks the image's keys KT at a time: it copies a tile of K and V (and the
// keys' mask) into workgroup memory, then each invocation folds the tile into its own query's online
// softmax and accumulator (lib/online-softmax.wgsl, 4 keys per step), its head in registers. Each key is
// read from global memory once per block of WG queries instead of once per query, and no [T, T] score
// matrix is ever stored. A query whose keys are all masked gets zeros.
// grid: batch * heads * ceil(tokens / WG) workgroups, linear (x, y split).
// Prepended by the host: KT (keys per tile, a multiple of 4, within the device's workgroup storage), the
// head code generated for D (src/kernels/attention-head.ts: HEAD_VEC4, `Head`, head_*; q from qkv, K and V
// from the tiles, out), lib/online-softmax.wgsl and lib/vit-attention-inputs.wgsl (Params, qkv, mask, out,
// WG).

var<workgroup> kTile: array<vec4<f32>, KT * HEAD_VEC4>;
var<workgroup> vTile: array<vec4<f32>, KT * HEAD_VEC4>;
var<workgroup> okTile: array<u32, KT>;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let blocks = (p.tokens + WG - 1u) / WG;
  let idx = grid_workgroup(wid, nwg);
  // Whole workgroups leave here (idx is the workgroup's), so the barriers below stay in uniform control flow.
  if (idx >= p.batch * p.heads * blocks) { return; }
  let block = idx % blocks;
  let h = (idx / blocks) % p.heads;
  let b = idx / (blocks * p.heads);
  let t = block * WG + lid;
  let last = p.tokens - 1u;
  // Offsets in vec4s: a row holds 3 * heads heads of HEAD_VEC4 vec4s each.
  let row4 = 3u * p.heads * HEAD_VEC4;
  let kOff = (p.heads + h) * HEAD_VEC4;
  let vOff = (2u * p.heads + h) * HEAD_VEC4;
  let keyBase = b * p.tokens;
  // Invocations past the last query take part in the copies and barriers with the last query's values.
  let q = head_load_q((keyBase + min(t, last)) * row4 + h * HEAD_VEC4, p.scale);
  var acc = head_zero();
  var sm = online_softmax_start();
  for (var j0 = 0u; j0 < p.tokens; j0 += KT) {
    for (var i = lid; i < KT * HEAD_VEC4; i += WG) {
      let r = (keyBase + min(j0 + i / HEAD_VEC4, last)) * row4 + i % HEAD_VEC4;
      kTile[i] = qkv[r + kOff];
      vTile[i] = qkv[r + vOff];
    }
    for (var i = lid; i < KT; i += WG) { okTile[i] = select(0u, mask[keyBase + min(j0 + i, last)], j0 + i < p.tokens); }
    workgroupBarrier();
    // The tile's keys up to the last token, 4 at a time (the last 4 padded with masked keys).
    let n = min(KT, p.tokens - j0);
    for (var j = 0u; j < n; j += 4u) {
      let rows = vec4<u32>(j, j + 1u, j + 2u, j + 3u) * HEAD_VEC4;
      let valid = vec4<bool>(okTile[j] != 0u, okTile[j + 1u] != 0u, okTile[j + 2u] != 0u, okTile[j + 3u] != 0u);
      let w = online_softmax_add4(&sm, head_scores4(q, rows), valid);
      acc = head_accumulate4(acc, w.c, w.pr, rows);
    }
    workgroupBarrier();
  }
  if (t >= p.tokens) { return; }
  head_store(((keyBase + t) * p.heads + h) * HEAD_VEC4, acc, online_softmax_inverse(sm));
}
