// decode-gate-up.wgsl: a decoder layer's MLP input for decode rows (M <= 8), three kernels in one:
//   x = RMSNorm(h) · ln2    gu = x · Wguᵀ (gate | up)    act = silu(gate) * up
// each step the same arithmetic as rms-norm.wgsl (lib/rms-rows.wgsl), gemv.wgsl (the same split-K and the
// same reduction) and swiglu.wgsl, so the results equal those three kernels' bit for bit at the same
// workgroup size. For the fused decode plan (src/kernels/decode-gate-up.ts).
//
// One workgroup = act columns j and j + 1 (j = 2 w) for all ROWS rows: the rows j, j + 1 of W's gate half
// and I + j, I + 1 + j of its up half, so each SwiGLU pair stays in the workgroup (with I odd, the last
// workgroup's second column is not written).
//
// h: [M, K] f32 as vec4    part: [M, parts, K] f32 as vec4    hOut: [M, K] f32 as vec4 (written)
// W: [2 I, K] in any storage format (lib/weights-*.wgsl prepended), gate rows first
// consts: f32, ln2 at lnOff    act: [M, I] f32 (written)    grid: ceil(I / 2) workgroups, linear (x, y split)

struct Params { M: u32, K: u32, eps: f32, lnOff: u32, I: u32, parts: u32, _pad0: u32, _pad1: u32 }

// @binding(0) x, (1) w_data, (2) w_scales and (3) consts: declared by lib/decode-gemv.wgsl and the weights lib
@group(0) @binding(4) var<storage, read_write> act: array<f32>;
@group(0) @binding(5) var<storage, read> part: array<vec4<f32>>;
@group(0) @binding(6) var<storage, read_write> hOut: array<vec4<f32>>;
@group(0) @binding(7) var<uniform> p: Params;

/** Row m of h' = h + the parts, vec4 k4 (lib/decode-gemv.wgsl normalises it). */
fn x_vec4(m: u32, k4: u32) -> vec4<f32> {
  let K4 = p.K / 4u;
  var v = x[m * K4 + k4];
  for (var g = 0u; g < p.parts; g++) { v += part[(m * p.parts + g) * K4 + k4]; }
  return v;
}

@compute @workgroup_size(WG)
fn main(
  @builtin(workgroup_id) wid: vec3<u32>,
  @builtin(num_workgroups) nwg: vec3<u32>,
  @builtin(local_invocation_index) lid: u32,
) {
  // No early return before the reductions: every invocation takes part in their barriers.
  let inv = rms_rows(lid, p.K, p.eps);
  let j = min(2u * grid_workgroup(wid, nwg), p.I - 1u);
  let j1 = min(j + 1u, p.I - 1u);
  let total = decode_gemv(lid, p.K, p.lnOff, inv, vec4<u32>(j, j1, p.I + j, p.I + j1));
  // This workgroup's share of h': vec4s w, w + numW, ... of each row.
  let numW = (p.I + 1u) / 2u;
  for (var i = grid_workgroup(wid, nwg) + lid * numW; i < ROWS * (p.K / 4u); i += WG * numW) {
    hOut[i] = x_vec4(i / (p.K / 4u), i % (p.K / 4u));
  }
  let first = 2u * grid_workgroup(wid, nwg);
  if (lid >= ROWS || first >= p.I) { return; }
  act[lid * p.I + first] = silu(total.x) * total.z;
  if (first + 1u < p.I) { act[lid * p.I + first + 1u] = silu(total.y) * total.w; }
}
