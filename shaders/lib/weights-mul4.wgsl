// lib/weights-mul4.wgsl: w_mul4 through w_load4, for every format that multiplies in f32 (all but
// lib/weights-f16-math.wgsl, which has its own). Composed by src/kernels/weight-lib.ts.

fn w_mul4(x: vec4<f32>, r0: WRow, r1: WRow, r2: WRow, r3: WRow, k4: u32) -> vec4<f32> {
  return x * mat4x4<f32>(w_load4(r0, k4), w_load4(r1, k4), w_load4(r2, k4), w_load4(r3, k4));
}
