// lib/decode-gemv.wgsl: RMSNorm then gemv.wgsl's product, in one workgroup, for the fused decode kernels
// (decode-qkv.wgsl, decode-gate-up.wgsl, decode-head.wgsl). The including kernel defines x_vec4(m, k4) (row
// m of its input, bound here as `x`, as vec4s along K) and its bindings from 4 on; this lib binds x (0) and
// `consts` (3: f32, the norm's weight at lnOff), the weights lib in front of it w_data and w_scales (1, 2).
// Needs lib/reduce-rows (MAX_ROWS), lib/workgroup-reduce and a weights lib in front.
//
// rms_rows: each row's 1 / sqrt(mean(x^2) + eps), summed as rms-norm.wgsl sums it (invocation i takes
// elements i, i + WG, ...; then workgroup_sum), so at the same WG it is bit-identical to that kernel's. Each
// workgroup reads the rows once more (K values each) instead of a dispatch of its own.
// x_norm: a vec4 of the normalised row, each value as rms-norm.wgsl computes it: w * (x * inv).
// decode_gemv: (x_norm rows) · rows cols.x, .y, .z, .w of W, split over K and reduced exactly as gemv.wgsl
// does; in invocation m < ROWS, row m's four sums. Every invocation must call rms_rows and decode_gemv
// (barriers).

override WG: u32 = 64;
// M, the rows of x (1..MAX_ROWS): a pipeline per M, as gemv.wgsl.
override ROWS: u32 = 1u;

@group(0) @binding(0) var<storage, read> x: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read> consts: array<f32>;

fn rms_rows(lid: u32, K: u32, eps: f32) -> array<f32, MAX_ROWS> {
  var inv: array<f32, MAX_ROWS>;
  for (var m = 0u; m < ROWS; m++) {
    var sq = 0.0;
    for (var i = lid; i < K; i += WG) {
      let v = x_vec4(m, i / 4u)[i % 4u];
      sq += v * v;
    }
    inv[m] = inverseSqrt(workgroup_sum(lid, sq) / f32(K) + eps);
  }
  return inv;
}

fn x_norm(m: u32, k4: u32, lnOff: u32, inv: f32) -> vec4<f32> {
  let g = lnOff + 4u * k4;
  return vec4<f32>(consts[g], consts[g + 1u], consts[g + 2u], consts[g + 3u]) * (x_vec4(m, k4) * inv);
}

fn decode_gemv(lid: u32, K: u32, lnOff: u32, inv: array<f32, MAX_ROWS>, cols: vec4<u32>) -> vec4<f32> {
  let r0 = w_row(cols.x, K);
  let r1 = w_row(cols.y, K);
  let r2 = w_row(cols.z, K);
  let r3 = w_row(cols.w, K);
  var acc: array<vec4<f32>, MAX_ROWS>;
  // Whole quantization groups, one per invocation per step, then the vec4s of a last, partial group.
  let numGroups = K / (4u * W_GROUP_VEC4);
  for (var g = lid; g < numGroups; g += WG) {
    for (var m = 0u; m < ROWS; m++) {
      let b = g * W_GROUP_VEC4;
      let s = inv[m];
      let xg = x_group(
        x_norm(m, b, lnOff, s), x_norm(m, b + 1u, lnOff, s), x_norm(m, b + 2u, lnOff, s), x_norm(m, b + 3u, lnOff, s),
        x_norm(m, b + 4u, lnOff, s), x_norm(m, b + 5u, lnOff, s), x_norm(m, b + 6u, lnOff, s), x_norm(m, b + 7u, lnOff, s),
      );
      acc[m] += vec4<f32>(w_dot_group(r0, g, xg), w_dot_group(r1, g, xg), w_dot_group(r2, g, xg), w_dot_group(r3, g, xg));
    }
  }
  for (var k4 = numGroups * W_GROUP_VEC4 + lid; k4 < K / 4u; k4 += WG) {
    for (var m = 0u; m < ROWS; m++) {
      acc[m] += w_mul4(x_norm(m, k4, lnOff, inv[m]), r0, r1, r2, r3, k4);
    }
  }
  return reduce_rows(&acc, lid);
}
