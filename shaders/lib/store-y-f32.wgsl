// lib/store-y-f32.wgsl: the output of matmul-register.wgsl as f32s, for any N and any y layout.
// store4(r, c, v) stores columns c..c+3 of row r of batch matrix zm (those < N), after the epilogue.

@group(0) @binding(4) var<storage, read_write> y: array<f32>;

// Written per component, without a loop over v[i]: a vector indexed by a loop counter is slow on SwiftShader.
fn store4(r: u32, c: u32, v: vec4<f32>) {
  if (r >= p.M) { return; }
  let base = p.y_off + zm * p.y_batch + r * p.y_stride + c;
  var o = v;
  let e = epilogue();
  if (e != 0u) {
    if (epilogue_bias(e)) {
      let last = p.N - 1u;
      o += vec4<f32>(b[min(c, last)], b[min(c + 1u, last)], b[min(c + 2u, last)], b[min(c + 3u, last)]);
    }
    let act = epilogue_activation(e);
    o = vec4<f32>(activate(o.x, act), activate(o.y, act), activate(o.z, act), activate(o.w, act));
    if (epilogue_accumulate(e) && c < p.N) {
      let last = base + (p.N - 1u - c); // the row's last column: reads past it are clamped, never stored
      o += vec4<f32>(y[base], y[min(base + 1u, last)], y[min(base + 2u, last)], y[min(base + 3u, last)]);
    }
  }
  if (c + 3u < p.N) {
    y[base] = o.x;
    y[base + 1u] = o.y;
    y[base + 2u] = o.z;
    y[base + 3u] = o.w;
    return;
  }
  if (c < p.N) { y[base] = o.x; }
  if (c + 1u < p.N) { y[base + 1u] = o.y; }
  if (c + 2u < p.N) { y[base + 2u] = o.z; }
}
