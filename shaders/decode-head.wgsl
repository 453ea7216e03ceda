// decode-head.wgsl: the language model head's first dispatch, three kernels in one:
//   hl = h[headRows]    x = RMSNorm(hl) · norm    logits = x · Wlmᵀ
// each step the same arithmetic as embedding-gather.wgsl (a copy), rms-norm.wgsl (lib/rms-rows.wgsl) and
// gemv.wgsl (the same split-K and the same reduction), so the logits equal those three kernels' bit for bit
// at the same workgroup size. For the fused decode plan (src/kernels/decode-head.ts).
//
// One workgroup = 4 columns of the logits for all ROWS head rows, as in gemv.wgsl. A head larger than one
// binding runs once per part of W's rows, each writing its columns (y_off, y_stride).
//
// h: [numRows, K] f32 as vec4 (the step's rows)    ints: u32, the head rows at rowsOff (each < numRows;
// the host checks)    W: [N, K] in any storage format (lib/weights-*.wgsl prepended)
// consts: f32, the final norm at lnOff    y: [M, y_stride] f32, columns y_off + [0, N) written
// grid: ceil(N / 4) workgroups, linear (x, y split)

struct Params { M: u32, N: u32, K: u32, eps: f32, lnOff: u32, rowsOff: u32, y_off: u32, y_stride: u32 }

// @binding(0) x, (1) w_data, (2) w_scales and (3) consts: declared by lib/decode-gemv.wgsl and the weights lib
@group(0) @binding(4) var<storage, read_write> y: array<f32>;
@group(0) @binding(5) var<storage, read> ints: array<u32>;
@group(0) @binding(6) var<uniform> p: Params;

/** Head row m (row headRows[m] of h), vec4 k4 (lib/decode-gemv.wgsl normalises it). */
fn x_vec4(m: u32, k4: u32) -> vec4<f32> {
  return x[ints[p.rowsOff + m] * (p.K / 4u) + k4];
}

@compute @workgroup_size(WG)
fn main(
  @builtin(workgroup_id) wid: vec3<u32>,
  @builtin(num_workgroups) nwg: vec3<u32>,
  @builtin(local_invocation_index) lid: u32,
) {
  // No early return before the reductions: every invocation takes part in their barriers.
  let inv = rms_rows(lid, p.K, p.eps);
  let c0 = grid_workgroup(wid, nwg) * 4u;
  let last = p.N - 1u;
  let total = decode_gemv(lid, p.K, p.lnOff, inv, min(vec4<u32>(c0) + vec4<u32>(0u, 1u, 2u, 3u), vec4<u32>(last)));
  if (lid >= ROWS) { return; }
  for (var i = 0u; i < 4u; i++) {
    if (c0 + i < p.N) { y[p.y_off + lid * p.y_stride + c0 + i] = total[i]; }
  }
}
