// lib/weights-f32.wgsl: a weight matrix W [N, K] of f32, read as vec4 along K (needs K % 4 == 0 and a
// 16-byte aligned binding). Every storage format provides the same interface, so a kernel reads any of
// them through it: src/kernels/weight-lib.ts puts the format's file together with the shared pieces it
// does not specialise (weights-unscaled, weights-mul4, weights-x-plain, weights-dot-raw4):
//
//   @binding(1) w_data (and @binding(2) w_scales for the quantized formats)
//   struct WRow                      where row n of W starts (computed once per row)
//   w_row(n, K) -> WRow
//   w_scale(r, k4) -> vec2<f32>      (scale, offset) of the quantization group holding vec4 k4
//   w_raw4(r, k4) -> vec4<f32>       the stored values of W[n, 4 k4 .. 4 k4 + 3] before scaling
//   w_dequant(raw, s) -> vec4<f32>   raw * s.x + s.y (the formats without groups return raw)
//   w_load4(r, k4) -> vec4<f32>      W[n, 4 k4 .. 4 k4 + 3]
//   w_load1(r, k) -> f32             W[n, k]
//   w_quad(r0, r1, r2, r3, k4) -> WQuad   those four rows of W at vec4 k4, loaded once (a mat4x4)
//   w_quad_mul(x, q) -> vec4<f32>   (x · each of the quad's rows): w_mul4 with the loads shared by rows of x
//   w_mul4(x, r0, r1, r2, r3, k4)    (x · W[r0, ..], x · W[r1, ..], x · W[r2, ..], x · W[r3, ..]) over one vec4
//   x_group(v0, .., v7) -> XGroup    x[32 g .. 32 g + 32) prepared for w_dot_group (lib/x-group.wgsl)
//   w_group(r, g) -> WGroup          W[n, 32 g .. 32 g + 32) loaded and unpacked once (lib/weights-group.wgsl)
//   w_group_dot(w, x) -> f32         x · that group, scaled: one row of x against a loaded group
//   w_dot_group(r, g, x) -> f32      x · W[n, 32 g .. 32 g + 32): the two above together, the fast path of
//                                    the decode kernels (whole groups: K / 32 of them)
//   W_GROUP_VEC4                     vec4s per quantization group (scales change only at its multiples)
//   W_NARROW_GROUPS                  whether decode kernels take W by whole groups (w_dot_group) or a vec4 at
//                                    a time (w_quad): whichever the format runs faster

const W_GROUP_VEC4: u32 = 8u;
// Decode kernels take W a vec4 at a time (w_quad), not by whole groups: an f32 group has nothing to
// unpack once, and on SwiftShader the group dot made 1-row decode ~25% slower (see matmul-register.wgsl).
const W_NARROW_GROUPS: bool = false;

@group(0) @binding(1) var<storage, read> w_data: array<vec4<f32>>;

struct WRow { d: u32, s: u32 }

fn w_row(n: u32, K: u32) -> WRow {
  return WRow(n * (K / 4u), 0u);
}

fn w_raw4(r: WRow, k4: u32) -> vec4<f32> {
  return w_data[r.d + k4];
}

fn w_load4(r: WRow, k4: u32) -> vec4<f32> {
  return w_data[r.d + k4];
}

fn w_load1(r: WRow, k: u32) -> f32 {
  return w_data[r.d + k / 4u][k % 4u];
}

fn w_group(r: WRow, g: u32) -> WGroup {
  let b = r.d + g * 8u;
  return WGroup(w_data[b], w_data[b + 1u], w_data[b + 2u], w_data[b + 3u],
    w_data[b + 4u], w_data[b + 5u], w_data[b + 6u], w_data[b + 7u], vec2<f32>(1.0, 0.0));
}

fn w_group_dot(w: WGroup, x: XGroup) -> f32 {
  return w_group_sum(w, x);
}
