// lib/weights-bf16.wgsl: a weight matrix W [N, K] stored as bfloat16, the checkpoint's own 16-bit values,
// widened to f32 in registers: exact (a bf16 value is the top half of the f32 with the same value), so a
// BF16 checkpoint's weights read the same f32 values as an f32 copy would, from half the bytes and half
// the loads. Needs K % 4 == 0.
//   w_data: [N, K / 4] vec2<u32>, each u32 = W[n, 2i] | W[n, 2i + 1] << 16 (the safetensors BF16 bytes
//           as they are, little-endian)
// The interface of every lib/weights-*.wgsl is listed in lib/weights-f32.wgsl.

const W_GROUP_VEC4: u32 = 8u;
// Decode kernels take W a vec4 at a time (w_quad), as for f32: nothing is shared by a whole group.
const W_NARROW_GROUPS: bool = false;

@group(0) @binding(1) var<storage, read> w_data: array<vec2<u32>>;

struct WRow { d: u32, s: u32 }

fn w_row(n: u32, K: u32) -> WRow {
  return WRow(n * (K / 4u), 0u);
}

// The two bf16 values of a word as f32: the low half shifted up, the high half with the low bits cleared.
fn bf16_pair(u: u32) -> vec2<f32> {
  return vec2<f32>(bitcast<f32>(u << 16u), bitcast<f32>(u & 0xffff0000u));
}

fn w_raw4(r: WRow, k4: u32) -> vec4<f32> {
  let u = w_data[r.d + k4];
  return vec4<f32>(bf16_pair(u.x), bf16_pair(u.y));
}

fn w_load4(r: WRow, k4: u32) -> vec4<f32> {
  return w_raw4(r, k4);
}

fn w_load1(r: WRow, k: u32) -> f32 {
  return bf16_pair(w_data[r.d + k / 4u][(k / 2u) % 2u])[k % 2u];
}
