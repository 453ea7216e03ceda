// lib/store-y-vec4.wgsl: the output of matmul-register.wgsl as vec4s, one store per 4 columns. Only for
// layouts where every 4 columns c..c+3 (c a multiple of 4) start on a vec4: N, y_off, y_stride and
// y_batch multiples of 4 and y bound at a 16-byte offset (src/kernels/matmul.ts checks). Then c < N
// means all four columns are inside the row.

@group(0) @binding(4) var<storage, read_write> y: array<vec4<f32>>;

fn store4(r: u32, c: u32, v: vec4<f32>) {
  if (r >= p.M || c >= p.N) { return; }
  let i = (p.y_off + zm * p.y_batch + r * p.y_stride + c) / 4u;
  var o = v;
  let e = epilogue();
  if (e != 0u) {
    if (epilogue_bias(e)) { o += vec4<f32>(b[c], b[c + 1u], b[c + 2u], b[c + 3u]); }
    let act = epilogue_activation(e);
    o = vec4<f32>(activate(o.x, act), activate(o.y, act), activate(o.z, act), activate(o.w, act));
    if (epilogue_accumulate(e)) { o += y[i]; }
  }
  y[i] = o;
}
