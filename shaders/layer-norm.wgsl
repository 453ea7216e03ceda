// layer-norm.wgsl: y = (x - mean) / sqrt(var + eps) * w + b, biased variance. One workgroup per row.
// Matches torch.nn.LayerNorm as used by HF `SiglipEncoderLayer`. Two passes over the row (mean, then
// centred squares) so large offsets do not cancel.
// x: [rows, dim] f32   w, b: [dim] f32   y: [rows, dim] f32   grid: linear over rows (x, y split)
// Prepended by the host: lib/workgroup-reduce.wgsl (workgroup_sum, workgroup_max).

override WG: u32 = 64;

struct Params { rows: u32, dim: u32, eps: f32, _pad: u32 }

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> w: array<f32>;
@group(0) @binding(2) var<storage, read> b: array<f32>;
@group(0) @binding(3) var<storage, read_write> y: array<f32>;
@group(0) @binding(4) var<uniform> p: Params;

@compute @workgroup_size(WG)
fn main(
  @builtin(workgroup_id) wid: vec3<u32>,
  @builtin(num_workgroups) nwg: vec3<u32>,
  @builtin(local_invocation_index) lid: u32,
) {
  let row = grid_workgroup(wid, nwg);
  if (row >= p.rows) { return; }
  let base = row * p.dim;
  var s = 0.0;
  for (var i = lid; i < p.dim; i += WG) { s += x[base + i]; }
  let mean = workgroup_sum(lid, s) / f32(p.dim);
  var sq = 0.0;
  for (var i = lid; i < p.dim; i += WG) {
    let d = x[base + i] - mean;
    sq += d * d;
  }
  let inv = inverseSqrt(workgroup_sum(lid, sq) / f32(p.dim) + p.eps);
  for (var i = lid; i < p.dim; i += WG) {
    y[base + i] = (x[base + i] - mean) * inv * w[i] + b[i];
  }
}
