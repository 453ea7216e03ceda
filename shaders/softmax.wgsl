// softmax.wgsl: y[r, :] = exp(x[r, :] - max) / sum(exp(x[r, :] - max)). One workgroup per row.
// Subtracting the row maximum keeps exp() in range for any finite input.
// x: [rows, cols] f32   y: [rows, cols] f32   grid: linear over rows (x, y split)
// Prepended by the host: lib/workgroup-reduce.wgsl (workgroup_sum, workgroup_max).

override WG: u32 = 64;

struct Params { rows: u32, cols: u32, _pad0: u32, _pad1: u32 }

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@group(0) @binding(2) var<uniform> p: Params;

@compute @workgroup_size(WG)
fn main(
  @builtin(workgroup_id) wid: vec3<u32>,
  @builtin(num_workgroups) nwg: vec3<u32>,
  @builtin(local_invocation_index) lid: u32,
) {
  let row = grid_workgroup(wid, nwg);
  if (row >= p.rows) { return; }
  let base = row * p.cols;
  var m = -3.402823e38;
  for (var i = lid; i < p.cols; i += WG) { m = max(m, x[base + i]); }
  let rowMax = workgroup_max(lid, m);
  var s = 0.0;
  for (var i = lid; i < p.cols; i += WG) { s += exp(x[base + i] - rowMax); }
  let inv = 1.0 / workgroup_sum(lid, s);
  for (var i = lid; i < p.cols; i += WG) { y[base + i] = exp(x[base + i] - rowMax) * inv; }
}
