// lib/weights-group.wgsl: one quantization group of a row of W (32 weights along K) loaded and unpacked
// into registers once, for every format that multiplies in f32 (all but lib/weights-f16-math.wgsl, which
// declares its own). A kernel that multiplies the same weights by several rows of x (the register
// matmul's main_narrow_rows) takes w_group once and w_group_dot per row; w_dot_group is the two together
// (lib/weights-dot-group.wgsl), so a row's result is the same however many rows share the load.
//   v0..v7   the group's values as the format's w_group_dot wants them (plain, unpacked or in place)
//   s        (scale, minimum) of the group, for the formats that have them
struct WGroup { v0: vec4<f32>, v1: vec4<f32>, v2: vec4<f32>, v3: vec4<f32>, v4: vec4<f32>, v5: vec4<f32>, v6: vec4<f32>, v7: vec4<f32>, s: vec2<f32> }

// x · v over the group, summed pairwise (the order every f32 format's dot product uses).
fn w_group_sum(w: WGroup, x: XGroup) -> f32 {
  let s = ((x.v0 * w.v0 + x.v1 * w.v1) + (x.v2 * w.v2 + x.v3 * w.v3)) +
    ((x.v4 * w.v4 + x.v5 * w.v5) + (x.v6 * w.v6 + x.v7 * w.v7));
  return (s.x + s.y) + (s.z + s.w);
}
