// lib/weights-q5k.wgsl: a weight matrix W [N, K] in llama.cpp's Q5_K blocks, as a GGUF file stores them
// (src/kernels/k-quants.ts), dequantized in registers. A block is 256 values of a row in 44 words:
//   word 0       pack2x16float(d, dmin)
//   words 1..3   12 bytes of 6-bit scales sc[s] and minimums m[s] for the 8 sub-blocks (groups of 32)
//   words 4..11  qh: bit s of byte l is the fifth bit (16) of value 32s + l
//   words 12..43 qs: word 12 + 8c + i holds values 64c + 4i .. +3 in its bytes' low nibbles (sub-block 2c)
//                and 64c + 32 + 4i .. +3 in their high nibbles (sub-block 2c + 1)
//   W[n, k] = q · (d · sc[s]) − dmin · m[s]     (q in 0..31, s = (k % 256) / 32)
// Needs K % 256 == 0. Reference: dequantizeKRows('q5k') in src/kernels/k-quants.ts.
// The interface of every lib/weights-*.wgsl is listed in lib/weights-f32.wgsl.

const W_GROUP_VEC4: u32 = 8u;
// Decode kernels take W by whole groups (w_dot_group): one scale and minimum per 32 weights.
const W_NARROW_GROUPS: bool = true;

@group(0) @binding(1) var<storage, read> w_data: array<u32>;

// d: first word of the row
struct WRow { d: u32, s: u32 }

fn w_row(n: u32, K: u32) -> WRow {
  return WRow(n * (K / 256u) * 44u, 0u);
}

// Byte i of the 12 scale bytes of the block at word b.
fn q5k_scale_byte(b: u32, i: u32) -> u32 {
  return (w_data[b + 1u + i / 4u] >> (8u * (i % 4u))) & 255u;
}

// (d · sc, −dmin · m) of group g of the row, as llama.cpp's get_scale_min_k4 unpacks them.
fn w_group_scale(r: WRow, g: u32) -> vec2<f32> {
  let b = r.d + (g / 8u) * 44u;
  let j = g % 8u;
  var sc: u32;
  var m: u32;
  if (j < 4u) {
    sc = q5k_scale_byte(b, j) & 63u;
    m = q5k_scale_byte(b, j + 4u) & 63u;
  } else {
    sc = (q5k_scale_byte(b, j + 4u) & 15u) | ((q5k_scale_byte(b, j - 4u) >> 6u) << 4u);
    m = (q5k_scale_byte(b, j + 4u) >> 4u) | ((q5k_scale_byte(b, j) >> 6u) << 4u);
  }
  let dm = unpack2x16float(w_data[b]);
  return vec2<f32>(dm.x * f32(sc), -(dm.y * f32(m)));
}

fn w_scale(r: WRow, k4: u32) -> vec2<f32> {
  return w_group_scale(r, k4 / 8u);
}

// Values 4i .. 4i + 3 of group g (i = k4 % 8): four nibbles and their fifth bits.
fn w_raw4(r: WRow, k4: u32) -> vec4<f32> {
  let g = k4 / 8u;
  let j = g % 8u;
  let b = r.d + (g / 8u) * 44u;
  let lo = w_data[b + 12u + 8u * (j / 2u) + k4 % 8u] >> (4u * (j % 2u));
  let hi = w_data[b + 4u + k4 % 8u] >> j;
  let q = ((vec4<u32>(lo) >> vec4<u32>(0u, 8u, 16u, 24u)) & vec4<u32>(15u)) |
    (((vec4<u32>(hi) >> vec4<u32>(0u, 8u, 16u, 24u)) & vec4<u32>(1u)) << vec4<u32>(4u));
  return vec4<f32>(bitcast<vec4<i32>>(q));
}

fn w_dequant(raw: vec4<f32>, s: vec2<f32>) -> vec4<f32> {
  return raw * s.x + s.y;
}

fn w_load4(r: WRow, k4: u32) -> vec4<f32> {
  return w_dequant(w_raw4(r, k4), w_scale(r, k4));
}

fn w_load1(r: WRow, k: u32) -> f32 {
  return w_load4(r, k / 4u)[k % 4u];
}

fn w_group(r: WRow, g: u32) -> WGroup {
  let k4 = g * 8u;
  return WGroup(w_raw4(r, k4), w_raw4(r, k4 + 1u), w_raw4(r, k4 + 2u), w_raw4(r, k4 + 3u),
    w_raw4(r, k4 + 4u), w_raw4(r, k4 + 5u), w_raw4(r, k4 + 6u), w_raw4(r, k4 + 7u), w_group_scale(r, g));
}

fn w_group_dot(w: WGroup, x: XGroup) -> f32 {
  return w_group_sum(w, x) * w.s.x + x.sum * w.s.y;
}
