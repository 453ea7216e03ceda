// lib/weights-f16.wgsl: a weight matrix W [N, K] stored as f16 and unpacked to f32 in registers, so it
// runs on every adapter (no `shader-f16` needed); the math stays f32. Needs K % 4 == 0.
//   w_data: [N, K / 4] vec2<u32>, each u32 = pack2x16float(W[n, 2i], W[n, 2i + 1])
// The interface of every lib/weights-*.wgsl is listed in lib/weights-f32.wgsl.

const W_GROUP_VEC4: u32 = 8u;

@group(0) @binding(1) var<storage, read> w_data: array<vec2<u32>>;

struct WRow { d: u32, s: u32 }

fn w_row(n: u32, K: u32) -> WRow {
  return WRow(n * (K / 4u), 0u);
}

fn w_scale(r: WRow, k4: u32) -> vec2<f32> {
  return vec2<f32>(1.0, 0.0);
}

fn w_raw4(r: WRow, k4: u32) -> vec4<f32> {
  let u = w_data[r.d + k4];
  return vec4<f32>(unpack2x16float(u.x), unpack2x16float(u.y));
}

fn w_dequant(raw: vec4<f32>, s: vec2<f32>) -> vec4<f32> {
  return raw;
}

fn w_load4(r: WRow, k4: u32) -> vec4<f32> {
  return w_raw4(r, k4);
}

fn w_load1(r: WRow, k: u32) -> f32 {
  return unpack2x16float(w_data[r.d + k / 4u][(k / 2u) % 2u])[k % 2u];
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
