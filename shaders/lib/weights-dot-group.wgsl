// lib/weights-dot-group.wgsl: w_dot_group through the format's w_group and w_group_dot, for every
// format. Composed by src/kernels/weight-lib.ts.

fn w_dot_group(r: WRow, g: u32, x: XGroup) -> f32 {
  return w_group_dot(w_group(r, g), x);
}
