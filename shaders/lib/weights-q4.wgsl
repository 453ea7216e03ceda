// lib/weights-q4.wgsl: a weight matrix W [N, K] quantized to 4 bits with a scale and a minimum per group
// of 32 along K (asymmetric, like llama.cpp Q4_1), dequantized in registers:
//   W[n, k] = q[n, k] * scale[g] + min[g],  q in 0..15,  g = group n, k / 32
//   w_data:   [N, Kp / 32] vec4<u32>: a group is one vec4<u32> = 4 words of 8 nibbles (bits 4j..4j+3 of
//             word i = k 8i + j)    Kp = K rounded up to 32
//   w_scales: [N, Kp / 32] u32, pack2x16float(scale, min)
// Needs K % 4 == 0 for w_raw4/w_load4. Reference: quantizeReference('q4') in src/kernels/weight-format.ts.
// The interface of every lib/weights-*.wgsl is listed in lib/weights-f32.wgsl.

const W_GROUP_VEC4: u32 = 8u;
// Decode kernels take W by whole groups (w_dot_group): one 16-byte load per 32 weights, nibbles in place.
const W_NARROW_GROUPS: bool = true;

@group(0) @binding(1) var<storage, read> w_data: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read> w_scales: array<u32>;

// d: first vec4<u32> (= group) of the row, s: first scale of the row
struct WRow { d: u32, s: u32 }

fn w_row(n: u32, K: u32) -> WRow {
  let groups = (K + 31u) / 32u;
  return WRow(n * groups, n * groups);
}

fn w_scale(r: WRow, k4: u32) -> vec2<f32> {
  return unpack2x16float(w_scales[r.s + k4 / 8u]);
}

// Nibbles 0..3 of the low 16 bits of u, as exact floats (via i32: the signed conversion is the cheap one).
fn q4_unpack(u: u32) -> vec4<f32> {
  return vec4<f32>(bitcast<vec4<i32>>((vec4<u32>(u) >> vec4<u32>(0u, 4u, 8u, 12u)) & vec4<u32>(15u)));
}

// vec4 k4 of the row: word (k4 % 8) / 2 of group k4 / 8, low (k4 even) or high (k4 odd) half.
fn w_raw4(r: WRow, k4: u32) -> vec4<f32> {
  return q4_unpack(w_data[r.d + k4 / 8u][(k4 % 8u) / 2u] >> (16u * (k4 & 1u)));
}

fn w_dequant(raw: vec4<f32>, s: vec2<f32>) -> vec4<f32> {
  return raw * s.x + s.y;
}

fn w_load4(r: WRow, k4: u32) -> vec4<f32> {
  return w_dequant(w_raw4(r, k4), w_scale(r, k4));
}

fn w_load1(r: WRow, k: u32) -> f32 {
  let q = (w_data[r.d + k / 32u][(k % 32u) / 8u] >> (4u * (k % 8u))) & 15u;
  let s = unpack2x16float(w_scales[r.s + k / 32u]);
  return f32(q) * s.x + s.y;
}

// The group's x pre-scaled so w_dot_group can take nibbles where they sit in the word: nibble j of a
// word, masked in place, is q * 2^(4 j) (the top one is shifted down 4 bits first, to stay a positive
// i32), so x_k is multiplied by 2^(-4 j) beforehand. Powers of two: exact.
const Q4_LO = vec4<f32>(1.0, 0.0625, 0.00390625, 0.000244140625);                    // 2^0, -4, -8, -12
const Q4_HI = vec4<f32>(1.52587890625e-05, 9.5367431640625e-07, 5.9604644775390625e-08, 5.9604644775390625e-08); // 2^-16, -20, -24, -24

fn x_group(v0: vec4<f32>, v1: vec4<f32>, v2: vec4<f32>, v3: vec4<f32>, v4: vec4<f32>, v5: vec4<f32>, v6: vec4<f32>, v7: vec4<f32>) -> XGroup {
  return XGroup(v0 * Q4_LO, v1 * Q4_HI, v2 * Q4_LO, v3 * Q4_HI, v4 * Q4_LO, v5 * Q4_HI, v6 * Q4_LO, v7 * Q4_HI,
    x_group_sum(v0, v1, v2, v3, v4, v5, v6, v7));
}

// Nibbles 0..3 / 4..7 of a word, masked in place, as exact floats (through i32: the cheap conversion).
fn q4_lo_in_place(u: u32) -> vec4<f32> {
  return vec4<f32>(bitcast<vec4<i32>>(vec4<u32>(u) & vec4<u32>(0xfu, 0xf0u, 0xf00u, 0xf000u)));
}

fn q4_hi_in_place(u: u32) -> vec4<f32> {
  return vec4<f32>(bitcast<vec4<i32>>(vec4<u32>(u, u, u, u >> 4u) & vec4<u32>(0xf0000u, 0xf00000u, 0xf000000u, 0xf000000u)));
}

// One 16-byte load and one (scale, min) for 32 weights: scale * (x · q) + min * sum(x).
fn w_group(r: WRow, g: u32) -> WGroup {
  let u = w_data[r.d + g];
  return WGroup(q4_lo_in_place(u.x), q4_hi_in_place(u.x), q4_lo_in_place(u.y), q4_hi_in_place(u.y),
    q4_lo_in_place(u.z), q4_hi_in_place(u.z), q4_lo_in_place(u.w), q4_hi_in_place(u.w), unpack2x16float(w_scales[r.s + g]));
}

fn w_group_dot(w: WGroup, x: XGroup) -> f32 {
  return w_group_sum(w, x) * w.s.x + x.sum * w.s.y;
}
