// lib/weights-f16.wgsl: a weight matrix W [N, K] stored as f16 and unpacked to f32 in registers, so it
// runs on every adapter (no `shader-f16` needed); the math stays f32. Needs K % 4 == 0.
//   w_data: [N, K / 4] vec2<u32>, each u32 = pack2x16float(W[n, 2i], W[n, 2i + 1])
// The interface of every lib/weights-*.wgsl is listed in lib/weights-f32.wgsl.

const W_GROUP_VEC4: u32 = 8u;
// Decode kernels take W by whole groups (w_dot_group).
const W_NARROW_GROUPS: bool = true;

@group(0) @binding(1) var<storage, read> w_data: array<vec2<u32>>;

struct WRow { d: u32, s: u32 }

fn w_row(n: u32, K: u32) -> WRow {
  return WRow(n * (K / 4u), 0u);
}

fn w_raw4(r: WRow, k4: u32) -> vec4<f32> {
  let u = w_data[r.d + k4];
  return vec4<f32>(unpack2x16float(u.x), unpack2x16float(u.y));
}

fn w_load4(r: WRow, k4: u32) -> vec4<f32> {
  return w_raw4(r, k4);
}

fn w_load1(r: WRow, k: u32) -> f32 {
  return unpack2x16float(w_data[r.d + k / 4u][(k / 2u) % 2u])[k % 2u];
}
