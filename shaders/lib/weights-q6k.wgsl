// lib/weights-q6k.wgsl: a weight matrix W [N, K] in llama.cpp's Q6_K blocks (src/kernels/k-quants.ts),
// dequantized in registers. A block is 256 values of a row in 53 words: the GGUF block's first 208
// bytes as they are, then its f16 d as an f32 (the 210-byte block is not whole words):
//   words 0..31   ql: in half h (128 values), value 32i + l has its low 4 bits in byte 64h + l + 32 (i & 1)
//                 (low nibble for i < 2, high for i >= 2)
//   words 32..47  qh: its high 2 bits at (byte 32h + l >> 2i) & 3
//   words 48..51  16 int8 scales, one per 16 values
//   word 52       d (f32)
//   W[n, k] = d · (scale[(k % 256) / 16] · (q − 32))
// The group's raw values are the integers scale · (q − 32) (|.| <= 4096), so one scale d serves the whole
// group of 32 (which spans two of the block's scales) and every product is exact in f32.
// Needs K % 256 == 0. Reference: dequantizeKRows('q6k') in src/kernels/k-quants.ts.
// The interface of every lib/weights-*.wgsl is listed in lib/weights-f32.wgsl.

const W_GROUP_VEC4: u32 = 8u;
// Decode kernels take W by whole groups (w_dot_group): one d per 32 weights.
const W_NARROW_GROUPS: bool = true;

@group(0) @binding(1) var<storage, read> w_data: array<u32>;

// d: first word of the row
struct WRow { d: u32, s: u32 }

fn w_row(n: u32, K: u32) -> WRow {
  return WRow(n * (K / 256u) * 53u, 0u);
}

fn w_scale(r: WRow, k4: u32) -> vec2<f32> {
  return vec2<f32>(bitcast<f32>(w_data[r.d + (k4 / 64u) * 53u + 52u]), 0.0);
}

// Values 4t .. 4t + 3 (t = k4 % 8) of group g = k4 / 8, which is slice i = g % 4 of half h = (g % 8) / 4.
fn w_raw4(r: WRow, k4: u32) -> vec4<f32> {
  let g = k4 / 8u;
  let h = (g % 8u) / 4u;
  let i = g % 4u;
  let t = k4 % 8u;
  let b = r.d + (g / 8u) * 53u;
  let lo = w_data[b + 16u * h + 8u * (i & 1u) + t] >> (4u * (i / 2u));
  let hi = w_data[b + 32u + 8u * h + t] >> (2u * i);
  let q = ((vec4<u32>(lo) >> vec4<u32>(0u, 8u, 16u, 24u)) & vec4<u32>(15u)) |
    (((vec4<u32>(hi) >> vec4<u32>(0u, 8u, 16u, 24u)) & vec4<u32>(3u)) << vec4<u32>(4u));
  let si = 8u * h + 2u * i + t / 4u;
  let scale = bitcast<i32>(w_data[b + 48u + si / 4u] << (24u - 8u * (si % 4u))) >> 24u;
  return vec4<f32>((bitcast<vec4<i32>>(q) - vec4<i32>(32)) * scale);
}

fn w_dequant(raw: vec4<f32>, s: vec2<f32>) -> vec4<f32> {
  return raw * s.x;
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
    w_raw4(r, k4 + 4u), w_raw4(r, k4 + 5u), w_raw4(r, k4 + 6u), w_raw4(r, k4 + 7u), w_scale(r, k4));
}

fn w_group_dot(w: WGroup, x: XGroup) -> f32 {
  return w_group_sum(w, x) * w.s.x;
}
