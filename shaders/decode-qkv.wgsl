// decode-qkv.wgsl: a decoder layer's first dispatch for decode rows (M <= 8), four kernels in one:
//   x = RMSNorm(h) · ln1    qkv = x · Wqkvᵀ (+ b)    q, k = RoPE(q, k; each row's position)
//   kCache[slot], vCache[slot] = k, v
// each step the same arithmetic as rms-norm.wgsl (lib/rms-rows.wgsl), gemv.wgsl (the same split-K and the
// same reduction), rope.wgsl and kv-write.wgsl, so the results equal those four kernels' bit for bit at the
// same workgroup size. For the fused decode plan (src/kernels/decode-qkv.ts).
//
// One workgroup = 4 columns of qkv for all ROWS rows, as in gemv.wgsl, chosen so that RoPE's pairs stay in
// the workgroup: in a q or k head (rotated), columns i, i + 1, half + i, half + 1 + i (i even); in a v head,
// four consecutive columns. The (q | k | v) row is [numHeads | numKvHeads | numKvHeads] heads of headDim.
//
// h: [M, K] f32 as vec4    W: [N, K] in any storage format (lib/weights-*.wgsl prepended), N = the qkv width
// consts: f32: the cos | sin table at 0 ([maxPositions, headDim] rows, rope.ts), ln1 at lnOff, b at biasOff
// qkv: [M, N] f32 (written)   ints: u32: positions at posOff + axis * posStride + m (axis 0 only without
// M-RoPE), slots at slotOff + m    kCache, vCache: [numSlots, numKvHeads, headDim] f32
// A position >= maxPositions leaves its frequencies unrotated and a slot >= numSlots writes no cache row,
// as in rope.wgsl and kv-write.wgsl; the host checks both before the step (the fused plan has no flags).
// grid: (numHeads + 2 numKvHeads) * headDim / 4 workgroups, linear (x, y split)

struct Params {
  M: u32, K: u32, eps: f32, lnOff: u32,
  biasOff: u32, hasBias: u32, numHeads: u32, numKvHeads: u32,
  headDim: u32, maxPositions: u32, mode: u32, secA: u32,
  secB: u32, posOff: u32, posStride: u32, slotOff: u32,
  numSlots: u32, _pad0: u32, _pad1: u32, _pad2: u32,
}

// @binding(0) x, (1) w_data, (2) w_scales and (3) consts: declared by lib/decode-gemv.wgsl and the weights lib
@group(0) @binding(4) var<storage, read_write> qkv: array<f32>;
@group(0) @binding(5) var<storage, read> ints: array<u32>;
@group(0) @binding(6) var<storage, read_write> kCache: array<f32>;
@group(0) @binding(7) var<storage, read_write> vCache: array<f32>;
@group(0) @binding(8) var<uniform> p: Params;

/** Row m of h, vec4 k4 (lib/decode-gemv.wgsl normalises it). */
fn x_vec4(m: u32, k4: u32) -> vec4<f32> {
  return x[m * (p.K / 4u) + k4];
}

/** Column i (0..3) of workgroup w. */
fn column_of(w: u32, i: u32) -> u32 {
  let D = p.headDim;
  let rotQuads = (p.numHeads + p.numKvHeads) * (D / 4u);
  if (w < rotQuads) {
    let head = w / (D / 4u);
    let j = (w % (D / 4u)) * 2u;
    return head * D + select(0u, D / 2u, i >= 2u) + j + (i & 1u);
  }
  return (p.numHeads + p.numKvHeads) * D + (w - rotQuads) * 4u + i;
}

/** The pair (a at frequency f, b at half + f) turned by row m's angle, as rope.wgsl turns it. */
fn rotate(m: u32, f: u32, a: f32, b: f32) -> vec2<f32> {
  let pos = ints[p.posOff + mrope_axis(f, p.mode, p.secA, p.secB) * p.posStride + m];
  if (pos >= p.maxPositions) { return vec2<f32>(a, b); }
  let c = consts[pos * p.headDim + f];
  let s = consts[pos * p.headDim + p.headDim / 2u + f];
  return vec2<f32>(a * c - b * s, b * c + a * s);
}

@compute @workgroup_size(WG)
fn main(
  @builtin(workgroup_id) wid: vec3<u32>,
  @builtin(num_workgroups) nwg: vec3<u32>,
  @builtin(local_invocation_index) lid: u32,
) {
  // No early return before the reductions: every invocation takes part in their barriers.
  let inv = rms_rows(lid, p.K, p.eps);
  let D = p.headDim;
  let N = (p.numHeads + 2u * p.numKvHeads) * D;
  let numW = N / 4u;
  let w = grid_workgroup(wid, nwg);
  let wc = min(w, numW - 1u);
  let cols = vec4<u32>(column_of(wc, 0u), column_of(wc, 1u), column_of(wc, 2u), column_of(wc, 3u));
  let total = decode_gemv(lid, p.K, p.lnOff, inv, cols);
  if (lid >= ROWS || w >= numW) { return; }
  let m = lid;
  var o = total;
  if (p.hasBias != 0u) {
    o += vec4<f32>(consts[p.biasOff + cols.x], consts[p.biasOff + cols.y], consts[p.biasOff + cols.z], consts[p.biasOff + cols.w]);
  }
  let qHeads = p.numHeads * D;
  let kvRow = p.numKvHeads * D;
  if (w < (p.numHeads + p.numKvHeads) * (D / 4u)) {
    let f = cols.x % D;
    let first = rotate(m, f, o.x, o.z);
    let second = rotate(m, f + 1u, o.y, o.w);
    o = vec4<f32>(first.x, second.x, first.y, second.y);
  }
  for (var i = 0u; i < 4u; i++) { qkv[m * N + cols[i]] = o[i]; }
  if (w < (p.numHeads * D) / 4u) { return; }
  let slot = ints[p.slotOff + m];
  if (slot >= p.numSlots) { return; }
  for (var i = 0u; i < 4u; i++) {
    let c = cols[i];
    if (c < qHeads + kvRow) {
      kCache[slot * kvRow + c - qHeads] = o[i];
    } else {
      vCache[slot * kvRow + c - qHeads - kvRow] = o[i];
    }
  }
}
