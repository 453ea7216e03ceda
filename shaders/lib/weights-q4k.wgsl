// lib/weights-q4k.wgsl: a weight matrix W [N, K] in llama.cpp's Q4_K blocks, as a GGUF file stores them
// (src/kernels/k-quants.ts), dequantized in registers. A block is 256 values of a row in 36 words:
//   word 0       pack2x16float(d, dmin)
//   words 1..3   12 bytes of 6-bit scales sc[s] and minimums m[s] for the 8 sub-blocks (groups of 32)
//   words 4..35  qs: word 4 + 8c + i holds values 64c + 4i .. +3 in its bytes' low nibbles (sub-block 2c)
//                and 64c + 32 + 4i .. +3 in their high nibbles (sub-block 2c + 1)
//   W[n, k] = q · (d · sc[s]) − dmin · m[s]     (s = (k % 256) / 32: one scale and minimum per group)
// Needs K % 256 == 0. Reference: dequantizeKRows('q4k') in src/kernels/k-quants.ts.
// The interface of every lib/weights-*.wgsl is listed in lib/weights-f32.wgsl.

const W_GROUP_VEC4: u32 = 8u;
// Decode kernels take W by whole groups (w_dot_group): one scale and minimum, 8 words per 32 weights.
const W_NARROW_GROUPS: bool = true;

@group(0) @binding(1) var<storage, read> w_data: array<u32>;

// d: first word of the row
struct WRow { d: u32, s: u32 }

fn w_row(n: u32, K: u32) -> WRow {
  return WRow(n * (K / 256u) * 36u, 0u);
}

// Byte i of the 12 scale bytes of the block at word b.
fn q4k_scale_byte(b: u32, i: u32) -> u32 {
  return (w_data[b + 1u + i / 4u] >> (8u * (i % 4u))) & 255u;
}

// (d · sc, −dmin · m) of group g of the row (sub-block g % 8 of block g / 8), as llama.cpp's
// get_scale_min_k4 unpacks them.
fn w_group_scale(r: WRow, g: u32) -> vec2<f32> {
  let b = r.d + (g / 8u) * 36u;
  let j = g % 8u;
  var sc: u32;
  var m: u32;
  if (j < 4u) {
    sc = q4k_scale_byte(b, j) & 63u;
    m = q4k_scale_byte(b, j + 4u) & 63u;
  } else {
    sc = (q4k_scale_byte(b, j + 4u) & 15u) | ((q4k_scale_byte(b, j - 4u) >> 6u) << 4u);
    m = (q4k_scale_byte(b, j + 4u) >> 4u) | ((q4k_scale_byte(b, j) >> 6u) << 4u);
  }
  let dm = unpack2x16float(w_data[b]);
  return vec2<f32>(dm.x * f32(sc), -(dm.y * f32(m)));
}

fn w_scale(r: WRow, k4: u32) -> vec2<f32> {
  return w_group_scale(r, k4 / 8u);
}

// The qs word holding vec4 k4, already shifted to its nibbles (bits 8t .. 8t + 3 = value t).
fn q4k_word(r: WRow, k4: u32) -> u32 {
  let g = k4 / 8u;
  let j = g % 8u;
  return w_data[r.d + (g / 8u) * 36u + 4u + 8u * (j / 2u) + k4 % 8u] >> (4u * (j % 2u));
}

fn q4k_unpack(u: u32) -> vec4<f32> {
  return vec4<f32>(bitcast<vec4<i32>>((vec4<u32>(u) >> vec4<u32>(0u, 8u, 16u, 24u)) & vec4<u32>(15u)));
}

fn w_raw4(r: WRow, k4: u32) -> vec4<f32> {
  return q4k_unpack(q4k_word(r, k4));
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

// 8 words and one (scale, minimum) for 32 weights: scale · (x · q) + minimum · sum(x).
fn w_group(r: WRow, g: u32) -> WGroup {
  let k4 = g * 8u;
  return WGroup(w_raw4(r, k4), w_raw4(r, k4 + 1u), w_raw4(r, k4 + 2u), w_raw4(r, k4 + 3u),
    w_raw4(r, k4 + 4u), w_raw4(r, k4 + 5u), w_raw4(r, k4 + 6u), w_raw4(r, k4 + 7u), w_group_scale(r, g));
}

fn w_group_dot(w: WGroup, x: XGroup) -> f32 {
  return w_group_sum(w, x) * w.s.x + x.sum * w.s.y;
}
