// lib/weights-f32-scalar.wgsl: a weight matrix W [N, K] of f32 read element by element, for any K and
// any 4-byte aligned binding (the tiled matmul with K % 4 != 0, the embedding gather). The interface of
// every lib/weights-*.wgsl is listed in lib/weights-f32.wgsl; w_raw4/w_load4 need K % 4 == 0.

const W_GROUP_VEC4: u32 = 8u;

@group(0) @binding(1) var<storage, read> w_data: array<f32>;

struct WRow { d: u32, s: u32 }

fn w_row(n: u32, K: u32) -> WRow {
  return WRow(n * K, 0u);
}

fn w_scale(r: WRow, k4: u32) -> vec2<f32> {
  return vec2<f32>(1.0, 0.0);
}

fn w_raw4(r: WRow, k4: u32) -> vec4<f32> {
  let i = r.d + 4u * k4;
  return vec4<f32>(w_data[i], w_data[i + 1u], w_data[i + 2u], w_data[i + 3u]);
}

fn w_dequant(raw: vec4<f32>, s: vec2<f32>) -> vec4<f32> {
  return raw;
}

fn w_load4(r: WRow, k4: u32) -> vec4<f32> {
  return w_raw4(r, k4);
}

fn w_load1(r: WRow, k: u32) -> f32 {
  return w_data[r.d + k];
}

fn w_mul4(x: vec4<f32>, r0: WRow, r1: WRow, r2: WRow, r3: WRow, k4: u32) -> vec4<f32> {
  return x * mat4x4<f32>(w_load4(r0, k4), w_load4(r1, k4), w_load4(r2, k4), w_load4(r3, k4));
}

fn x_group(v0: vec4<f32>, v1: vec4<f32>, v2: vec4<f32>, v3: vec4<f32>, v4: vec4<f32>, v5: vec4<f32>, v6: vec4<f32>, v7: vec4<f32>) -> XGroup {
  return x_group_plain(v0, v1, v2, v3, v4, v5, v6, v7);
}

fn w_dot_group(r: WRow, g: u32, x: XGroup) -> f32 {
  let b = g * 8u;
  let s = ((x.v0 * w_raw4(r, b) + x.v1 * w_raw4(r, b + 1u)) + (x.v2 * w_raw4(r, b + 2u) + x.v3 * w_raw4(r, b + 3u))) +
    ((x.v4 * w_raw4(r, b + 4u) + x.v5 * w_raw4(r, b + 5u)) + (x.v6 * w_raw4(r, b + 6u) + x.v7 * w_raw4(r, b + 7u)));
  return (s.x + s.y) + (s.z + s.w);
}
