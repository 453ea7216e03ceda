// lib/weights-f16-math.wgsl: f16 weights (the same bytes as lib/weights-f16.wgsl) read as f16 and, in
// w_mul4, multiplied in f16: x is rounded to f16, the four products of each dot are summed in f16, and
// the caller accumulates those sums in f32 (WebLLM's q4f16 / transformers.js fp16 math). Only for
// adapters with `shader-f16`: the kernel's assembled source starts with `enable f16;`
// (src/kernels/weight-format.ts puts it there). Needs K % 4 == 0.
//   w_data: [N, K / 4] vec4<f16>
// The interface of every lib/weights-*.wgsl is listed in lib/weights-f32.wgsl.

const W_GROUP_VEC4: u32 = 8u;
// Decode kernels take W by whole groups (w_dot_group): the f16 products are summed pairwise per group.
const W_NARROW_GROUPS: bool = true;

@group(0) @binding(1) var<storage, read> w_data: array<vec4<f16>>;

struct WRow { d: u32, s: u32 }

fn w_row(n: u32, K: u32) -> WRow {
  return WRow(n * (K / 4u), 0u);
}

fn w_raw4(r: WRow, k4: u32) -> vec4<f32> {
  return vec4<f32>(w_data[r.d + k4]);
}

fn w_load4(r: WRow, k4: u32) -> vec4<f32> {
  return vec4<f32>(w_data[r.d + k4]);
}

fn w_load1(r: WRow, k: u32) -> f32 {
  return f32(w_data[r.d + k / 4u][k % 4u]);
}

alias WQuad = mat4x4<f16>;

fn w_quad(r0: WRow, r1: WRow, r2: WRow, r3: WRow, k4: u32) -> WQuad {
  return mat4x4<f16>(w_data[r0.d + k4], w_data[r1.d + k4], w_data[r2.d + k4], w_data[r3.d + k4]);
}

fn w_quad_mul(x: vec4<f32>, q: WQuad) -> vec4<f32> {
  return vec4<f32>(vec4<f16>(x) * q);
}

fn w_mul4(x: vec4<f32>, r0: WRow, r1: WRow, r2: WRow, r3: WRow, k4: u32) -> vec4<f32> {
  return w_quad_mul(x, w_quad(r0, r1, r2, r3, k4));
}

// A group of W as f16 (lib/weights-group.wgsl's role, in this format's own precision).
struct WGroup { v0: vec4<f16>, v1: vec4<f16>, v2: vec4<f16>, v3: vec4<f16>, v4: vec4<f16>, v5: vec4<f16>, v6: vec4<f16>, v7: vec4<f16> }

fn w_group(r: WRow, g: u32) -> WGroup {
  let b = r.d + g * 8u;
  return WGroup(w_data[b], w_data[b + 1u], w_data[b + 2u], w_data[b + 3u], w_data[b + 4u], w_data[b + 5u], w_data[b + 6u], w_data[b + 7u]);
}

fn w_group_dot(w: WGroup, x: XGroup) -> f32 {
  let s = ((vec4<f16>(x.v0) * w.v0 + vec4<f16>(x.v1) * w.v1) + (vec4<f16>(x.v2) * w.v2 + vec4<f16>(x.v3) * w.v3)) +
    ((vec4<f16>(x.v4) * w.v4 + vec4<f16>(x.v5) * w.v5) + (vec4<f16>(x.v6) * w.v6 + vec4<f16>(x.v7) * w.v7));
  return f32((s.x + s.y) + (s.z + s.w));
}
