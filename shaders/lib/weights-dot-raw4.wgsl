// lib/weights-dot-raw4.wgsl: w_dot_group through w_raw4, for formats with no faster whole-group read
// (f32 element by element, f16 pairs). Composed by src/kernels/weight-lib.ts.

fn w_dot_group(r: WRow, g: u32, x: XGroup) -> f32 {
  let b = g * 8u;
  let s = ((x.v0 * w_raw4(r, b) + x.v1 * w_raw4(r, b + 1u)) + (x.v2 * w_raw4(r, b + 2u) + x.v3 * w_raw4(r, b + 3u))) +
    ((x.v4 * w_raw4(r, b + 4u) + x.v5 * w_raw4(r, b + 5u)) + (x.v6 * w_raw4(r, b + 6u) + x.v7 * w_raw4(r, b + 7u)));
  return (s.x + s.y) + (s.z + s.w);
}
