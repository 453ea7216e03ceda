// matmul.wgsl: y = act(x · Wᵀ + b), workgroup-memory tiled. For GPUs, and for any K (no alignment needs).
// One workgroup = a 64 x 64 output tile, 16 x 16 invocations, each owning a 4 x 4 block of it.
// Each K step of 16 stages a 64 x 16 slice of x and of W in workgroup memory (coalesced along K),
// stored K-major as vec4s so the inner loop reads one vec4 of x rows and one of W rows per k.
//
// x: [M, K] f32    W: [N, K] (HF Linear layout [out, in]) in any storage format, read element by element
// through the lib/weights-*.wgsl prepended by src/kernels/matmul.ts (w_row, w_load1; f32 uses
// lib/weights-f32-scalar.wgsl, so any K works)    b: [N] f32 (read only when the epilogue adds a bias)
// y: [M, N] f32 (or columns of wider rows: y_off, y_stride)    grid: (ceil(N / 64), ceil(M / 64))


const TILE: u32 = 64u;
const BK: u32 = 16u;

// epilogue: bit 0 = add bias; bits 1..2 = activation (0 none, 1 GELU tanh, 2 SiLU); bit 3 = add y's
// previous value (a residual connection: y += act(x · Wᵀ + b)). A uniform, not an
// override, so one pipeline serves every layer: the unrolled register kernel takes seconds to compile
// on SwiftShader, and the branch costs nothing next to the K loop.
// The fields after epilogue are matmul-register.wgsl's layout; of them these kernels read y_off and
// y_stride (y[r, c] is y[y_off + r * y_stride + c]: y_off 0 and y_stride N but for a row-split weight's part).
struct Params {
  M: u32, N: u32, K: u32, epilogue: u32,
  x_off: u32, x_stride: u32, x_batch: u32,
  w_off: u32, w_stride: u32, w_batch: u32,
  y_off: u32, y_stride: u32, y_batch: u32,
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
// @binding(1) w_data and @binding(2) w_scales: declared by the lib/weights-*.wgsl in front of this file
@group(0) @binding(3) var<storage, read> b: array<f32>;
@group(0) @binding(4) var<storage, read_write> y: array<f32>;
@group(0) @binding(5) var<uniform> p: Params;

// [BK][TILE / 4] vec4: element (k, i) lives at [k * 16 + i / 4][i % 4]
var<workgroup> xs: array<vec4<f32>, 256>;
var<workgroup> ws: array<vec4<f32>, 256>;

@compute @workgroup_size(16, 16)
fn main(
  @builtin(workgroup_id) wid: vec3<u32>,
  @builtin(local_invocation_id) lid: vec3<u32>,
  @builtin(local_invocation_index) li: u32,
) {
  let m0 = wid.y * TILE;
  let n0 = wid.x * TILE;
  var acc0 = vec4<f32>();
  var acc1 = vec4<f32>();
  var acc2 = vec4<f32>();
  var acc3 = vec4<f32>();
  let numSteps = (p.K + BK - 1u) / BK;
  for (var step = 0u; step < numSteps; step++) {
    let k0 = step * BK;
    // 64 x 16 elements per operand, 4 per invocation; consecutive invocations read consecutive k.
    for (var j = 0u; j < 4u; j++) {
      let e = li + j * 256u;
      let i = e / BK;
      let kk = e % BK;
      let k = k0 + kk;
      var xv = 0.0;
      if (m0 + i < p.M && k < p.K) { xv = x[(m0 + i) * p.K + k]; }
      var wv = 0.0;
      if (n0 + i < p.N && k < p.K) { wv = w_load1(w_row(n0 + i, p.K), k); }
      xs[kk * 16u + i / 4u][i % 4u] = xv;
      ws[kk * 16u + i / 4u][i % 4u] = wv;
    }
    workgroupBarrier();
    for (var kk = 0u; kk < BK; kk++) {
      let a = xs[kk * 16u + lid.y];
      let bv = ws[kk * 16u + lid.x];
      acc0 += a.x * bv;
      acc1 += a.y * bv;
      acc2 += a.z * bv;
      acc3 += a.w * bv;
    }
    workgroupBarrier();
  }
  let r = m0 + lid.y * 4u;
  let c = n0 + lid.x * 4u;
  store4(r, c, acc0);
  store4(r + 1u, c, acc1);
  store4(r + 2u, c, acc2);
  store4(r + 3u, c, acc3);
}

fn store4(r: u32, c: u32, v: vec4<f32>) {
  if (r >= p.M) { return; }
  for (var i = 0u; i < 4u; i++) {
    let col = c + i;
    if (col < p.N) {
      var o = v[i];
      if (epilogue_bias(p.epilogue)) { o += b[col]; }
      o = activate(o, epilogue_activation(p.epilogue));
      let yi = p.y_off + r * p.y_stride + col;
      if (epilogue_accumulate(p.epilogue)) { o += y[yi]; }
      y[yi] = o;
    }
  }
}
