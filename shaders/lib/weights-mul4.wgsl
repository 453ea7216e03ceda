// lib/weights-mul4.wgsl: w_quad, w_quad_mul and w_mul4 through w_load4, for every format that multiplies
// in f32 (all but lib/weights-f16-math.wgsl, which has its own). Composed by src/kernels/weight-lib.ts.

alias WQuad = mat4x4<f32>;

// Columns r0..r3 of W at vec4 k4, as the columns of a matrix (loaded and dequantized once).
fn w_quad(r0: WRow, r1: WRow, r2: WRow, r3: WRow, k4: u32) -> WQuad {
  return mat4x4<f32>(w_load4(r0, k4), w_load4(r1, k4), w_load4(r2, k4), w_load4(r3, k4));
}

// (x · column 0, .., x · column 3) of a loaded quad.
fn w_quad_mul(x: vec4<f32>, q: WQuad) -> vec4<f32> {
  return x * q;
}

fn w_mul4(x: vec4<f32>, r0: WRow, r1: WRow, r2: WRow, r3: WRow, k4: u32) -> vec4<f32> {
  return w_quad_mul(x, w_quad(r0, r1, r2, r3, k4));
}
