// rms-norm.wgsl: y = x * w / sqrt(mean(x^2) + eps). One workgroup per row.
// Matches HF `LlamaRMSNorm.forward` (statistics in f32, weight applied after normalising).
// x: [rows, dim] f32   w: [dim] f32   y: [rows, dim] f32   grid: linear over rows (x, y split)
// Prepended by the host: lib/workgroup-reduce.wgsl (workgroup_sum, workgroup_max).

override WG: u32 = 64;

struct Params { rows: u32, dim: u32, eps: f32, _pad: u32 }

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> w: array<f32>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>;
@group(0) @binding(3) var<uniform> p: Params;

@compute @workgroup_size(WG)
fn main(
  @builtin(workgroup_id) wid: vec3<u32>,
  @builtin(num_workgroups) nwg: vec3<u32>,
  @builtin(local_invocation_index) lid: u32,
) {
  let row = grid_workgroup(wid, nwg);
  if (row >= p.rows) { return; }
  let base = row * p.dim;
  var sq = 0.0;
  for (var i = lid; i < p.dim; i += WG) {
    let v = x[base + i];
    sq += v * v;
  }
  let inv = inverseSqrt(workgroup_sum(lid, sq) / f32(p.dim) + p.eps);
  for (var i = lid; i < p.dim; i += WG) {
    y[base + i] = w[i] * (x[base + i] * inv);
  }
}
