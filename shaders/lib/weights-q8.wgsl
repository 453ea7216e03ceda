// lib/weights-q8.wgsl: a weight matrix W [N, K] quantized to int8, symmetric, one f32 scale per group
// of 32 along K, dequantized in registers: W[n, k] = q[n, k] * scale[n, k / 32].
//   w_data:   [N, Kp / 16] vec4<u32>: a group is 2 vec4<u32> = 8 words of 4 int8 (byte j of word i =
//             k 4i + j, two's complement)   Kp = K rounded up to 32
//   w_scales: [N, Kp / 32] f32
// Needs K % 4 == 0 for w_raw4/w_load4. Reference: quantizeReference('q8') in src/kernels/weight-format.ts.
// The interface of every lib/weights-*.wgsl is listed in lib/weights-f32.wgsl.

const W_GROUP_VEC4: u32 = 8u;
// Decode kernels take W by whole groups (w_dot_group): one scale and two 16-byte loads per 32 weights.
const W_NARROW_GROUPS: bool = true;

@group(0) @binding(1) var<storage, read> w_data: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read> w_scales: array<f32>;

// d: first vec4<u32> of the row, s: first scale of the row
struct WRow { d: u32, s: u32 }

fn w_row(n: u32, K: u32) -> WRow {
  let groups = (K + 31u) / 32u;
  return WRow(n * groups * 2u, n * groups);
}

fn w_scale(r: WRow, k4: u32) -> vec2<f32> {
  return vec2<f32>(w_scales[r.s + k4 / 8u], 0.0);
}

// Each byte shifted to the top of an i32, then shifted back arithmetically: sign-extended int8.
fn q8_unpack(u: u32) -> vec4<f32> {
  return vec4<f32>(bitcast<vec4<i32>>(vec4<u32>(u << 24u, u << 16u, u << 8u, u)) >> vec4<u32>(24u));
}

fn w_raw4(r: WRow, k4: u32) -> vec4<f32> {
  return q8_unpack(w_data[r.d + k4 / 4u][k4 % 4u]);
}

fn w_dequant(raw: vec4<f32>, s: vec2<f32>) -> vec4<f32> {
  return raw * s.x;
}

fn w_load4(r: WRow, k4: u32) -> vec4<f32> {
  return w_raw4(r, k4) * w_scales[r.s + k4 / 8u];
}

fn w_load1(r: WRow, k: u32) -> f32 {
  let q = bitcast<i32>(w_data[r.d + k / 16u][(k / 4u) % 4u] << (24u - 8u * (k % 4u))) >> 24u;
  return f32(q) * w_scales[r.s + k / 32u];
}

// Two 16-byte loads and one scale for 32 weights; the scale is applied once to the group's dot product.
fn w_group(r: WRow, g: u32) -> WGroup {
  let a = w_data[r.d + 2u * g];
  let b = w_data[r.d + 2u * g + 1u];
  return WGroup(q8_unpack(a.x), q8_unpack(a.y), q8_unpack(a.z), q8_unpack(a.w),
    q8_unpack(b.x), q8_unpack(b.y), q8_unpack(b.z), q8_unpack(b.w), vec2<f32>(w_scales[r.s + g], 0.0));
}

fn w_group_dot(w: WGroup, x: XGroup) -> f32 {
  return w_group_sum(w, x) * w.s.x;
}
