// lib/x-group.wgsl: one quantization group (32 values along K) of a row of x, held in registers, for
// w_dot_group() of lib/weights-*.wgsl. Each weights lib builds it with its own x_group(v0, .., v7)
// (x[32 g .. 32 g + 32) of one row as 8 vec4s), which may pre-scale the values for its unpacking;
// `sum` is always the group's plain total, which formats with a minimum per group (q4) need:
// sum_k x_k (q_k s + m) = s * sum_k x_k q_k + m * sum_k x_k.

struct XGroup { v0: vec4<f32>, v1: vec4<f32>, v2: vec4<f32>, v3: vec4<f32>, v4: vec4<f32>, v5: vec4<f32>, v6: vec4<f32>, v7: vec4<f32>, sum: f32 }

fn x_group_sum(v0: vec4<f32>, v1: vec4<f32>, v2: vec4<f32>, v3: vec4<f32>, v4: vec4<f32>, v5: vec4<f32>, v6: vec4<f32>, v7: vec4<f32>) -> f32 {
  let t = ((v0 + v1) + (v2 + v3)) + ((v4 + v5) + (v6 + v7));
  return (t.x + t.y) + (t.z + t.w);
}

/** The XGroup of the formats that read x as it is. */
fn x_group_plain(v0: vec4<f32>, v1: vec4<f32>, v2: vec4<f32>, v3: vec4<f32>, v4: vec4<f32>, v5: vec4<f32>, v6: vec4<f32>, v7: vec4<f32>) -> XGroup {
  return XGroup(v0, v1, v2, v3, v4, v5, v6, v7, x_group_sum(v0, v1, v2, v3, v4, v5, v6, v7));
}
