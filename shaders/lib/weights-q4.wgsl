// lib/weights-q4.wgsl: a weight matrix W [N, K] quantized to 4 bits with a scale and a minimum per group
// of 32 along K (asymmetric, like llama.cpp Q4_1), dequantized in registers:
//   W[n, k] = q[n, k] * scale[g] + min[g],  q in 0..15,  g = group n, k / 32
//   w_data:   [N, Kp / 8] u32, 8 nibbles per word (bits 4j..4j+3 = k 8i + j)    Kp = K rounded up to 32
//   w_scales: [N, Kp / 32] u32, pack2x16float(scale, min)
// Needs K % 4 == 0 for w_raw4/w_load4. Reference: quantizeReference('q4') in src/kernels/weight-format.ts.
// The interface of every lib/weights-*.wgsl is listed in lib/weights-f32.wgsl.

const W_GROUP_VEC4: u32 = 8u;

@group(0) @binding(1) var<storage, read> w_data: array<u32>;
@group(0) @binding(2) var<storage, read> w_scales: array<u32>;

struct WRow { d: u32, s: u32 }

fn w_row(n: u32, K: u32) -> WRow {
  let groups = (K + 31u) / 32u;
  return WRow(n * groups * 4u, n * groups);
}

fn w_scale(r: WRow, k4: u32) -> vec2<f32> {
  return unpack2x16float(w_scales[r.s + k4 / 8u]);
}

// vec4 k4 is the low (k4 even) or high (k4 odd) half of word k4 / 2.
fn w_raw4(r: WRow, k4: u32) -> vec4<f32> {
  let u = w_data[r.d + k4 / 2u] >> (16u * (k4 & 1u));
  return vec4<f32>((vec4<u32>(u) >> vec4<u32>(0u, 4u, 8u, 12u)) & vec4<u32>(15u));
}

fn w_dequant(raw: vec4<f32>, s: vec2<f32>) -> vec4<f32> {
  return raw * s.x + s.y;
}

fn w_load4(r: WRow, k4: u32) -> vec4<f32> {
  return w_dequant(w_raw4(r, k4), w_scale(r, k4));
}

fn w_load1(r: WRow, k: u32) -> f32 {
  let q = (w_data[r.d + k / 8u] >> (4u * (k % 8u))) & 15u;
  let s = unpack2x16float(w_scales[r.s + k / 32u]);
  return f32(q) * s.x + s.y;
}

fn w_mul4(x: vec4<f32>, r0: WRow, r1: WRow, r2: WRow, r3: WRow, k4: u32) -> vec4<f32> {
  return x * mat4x4<f32>(w_load4(r0, k4), w_load4(r1, k4), w_load4(r2, k4), w_load4(r3, k4));
}
