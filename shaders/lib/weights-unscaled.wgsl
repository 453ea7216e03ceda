// lib/weights-unscaled.wgsl: w_scale and w_dequant of the formats without quantization groups (f32,
// f16): the stored value is the weight. Composed with them by src/kernels/weight-lib.ts.

fn w_scale(r: WRow, k4: u32) -> vec2<f32> {
  return vec2<f32>(1.0, 0.0);
}

fn w_dequant(raw: vec4<f32>, s: vec2<f32>) -> vec4<f32> {
  return raw;
}
