// lib/weights-dot-raw4.wgsl: w_group through w_raw4, for formats with no faster whole-group read
// (f32 element by element, f16 pairs). Composed by src/kernels/weight-lib.ts.

fn w_group(r: WRow, g: u32) -> WGroup {
  let b = g * 8u;
  return WGroup(w_raw4(r, b), w_raw4(r, b + 1u), w_raw4(r, b + 2u), w_raw4(r, b + 3u),
    w_raw4(r, b + 4u), w_raw4(r, b + 5u), w_raw4(r, b + 6u), w_raw4(r, b + 7u), vec2<f32>(1.0, 0.0));
}

fn w_group_dot(w: WGroup, x: XGroup) -> f32 {
  return w_group_sum(w, x);
}
