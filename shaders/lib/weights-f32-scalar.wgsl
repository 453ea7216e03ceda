// lib/weights-f32-scalar.wgsl: a weight matrix W [N, K] of f32 read element by element, for any K and
// any 4-byte aligned binding (the tiled matmul with K % 4 != 0, the embedding gather). The interface of
// every lib/weights-*.wgsl is listed in lib/weights-f32.wgsl; w_raw4/w_load4 need K % 4 == 0.

const W_GROUP_VEC4: u32 = 8u;

@group(0) @binding(1) var<storage, read> w_data: array<f32>;

struct WRow { d: u32, s: u32 }

fn w_row(n: u32, K: u32) -> WRow {
  return WRow(n * K, 0u);
}

fn w_raw4(r: WRow, k4: u32) -> vec4<f32> {
  let i = r.d + 4u * k4;
  return vec4<f32>(w_data[i], w_data[i + 1u], w_data[i + 2u], w_data[i + 3u]);
}

fn w_load4(r: WRow, k4: u32) -> vec4<f32> {
  return w_raw4(r, k4);
}

fn w_load1(r: WRow, k: u32) -> f32 {
  return w_data[r.d + k];
}
