// lib/weights-x-plain.wgsl: x_group for the formats that read x as it is (all but q4, which pre-scales).
// Composed by src/kernels/weight-lib.ts.

fn x_group(v0: vec4<f32>, v1: vec4<f32>, v2: vec4<f32>, v3: vec4<f32>, v4: vec4<f32>, v5: vec4<f32>, v6: vec4<f32>, v7: vec4<f32>) -> XGroup {
  return x_group_plain(v0, v1, v2, v3, v4, v5, v6, v7);
}
