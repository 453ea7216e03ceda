// lib/weights-q8.wgsl: a weight matrix W [N, K] quantized to int8, symmetric, one f32 scale per group
// of 32 along K, dequantized in registers: W[n, k] = q[n, k] * scale[n, k / 32].
//   w_data:   [N, Kp / 4] u32, 4 int8 per word (byte j = k 4i + j, two's complement)   Kp = K rounded up to 32
//   w_scales: [N, Kp / 32] f32
// Needs K % 4 == 0 for w_raw4/w_load4. Reference: quantizeReference('q8') in src/kernels/weight-format.ts.
// The interface of every lib/weights-*.wgsl is listed in lib/weights-f32.wgsl.

const W_GROUP_VEC4: u32 = 8u;

@group(0) @binding(1) var<storage, read> w_data: array<u32>;
@group(0) @binding(2) var<storage, read> w_scales: array<f32>;

struct WRow { d: u32, s: u32 }

fn w_row(n: u32, K: u32) -> WRow {
  let groups = (K + 31u) / 32u;
  return WRow(n * groups * 8u, n * groups);
}

fn w_scale(r: WRow, k4: u32) -> vec2<f32> {
  return vec2<f32>(w_scales[r.s + k4 / 8u], 0.0);
}

// Each byte shifted to the top of an i32, then shifted back arithmetically: sign-extended int8.
fn w_raw4(r: WRow, k4: u32) -> vec4<f32> {
  let u = w_data[r.d + k4];
  let q = bitcast<vec4<i32>>(vec4<u32>(u << 24u, u << 16u, u << 8u, u)) >> vec4<u32>(24u);
  return vec4<f32>(q);
}

fn w_dequant(raw: vec4<f32>, s: vec2<f32>) -> vec4<f32> {
  return raw * s.x;
}

fn w_load4(r: WRow, k4: u32) -> vec4<f32> {
  return w_raw4(r, k4) * w_scales[r.s + k4 / 8u];
}

fn w_load1(r: WRow, k: u32) -> f32 {
  let q = bitcast<i32>(w_data[r.d + k / 4u] << (24u - 8u * (k % 4u))) >> 24u;
  return f32(q) * w_scales[r.s + k / 32u];
}

fn w_mul4(x: vec4<f32>, r0: WRow, r1: WRow, r2: WRow, r3: WRow, k4: u32) -> vec4<f32> {
  return x * mat4x4<f32>(w_load4(r0, k4), w_load4(r1, k4), w_load4(r2, k4), w_load4(r3, k4));
}
