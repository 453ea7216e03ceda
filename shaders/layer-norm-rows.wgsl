// layer-norm-rows.wgsl: y = (x - mean) / sqrt(var + eps) * w + b, biased variance, as layer-norm.wgsl,
// with one invocation per row instead of one workgroup: no workgroup memory and no barrier (the CPU-adapter
// path, where a workgroup's invocations are SIMD lanes of one thread and barriers are costly; for many
// rows: the vision tower's 1024 per tile). Three passes over the row, which stays in cache after the
// first: the mean, the centred squares (so large offsets do not cancel), then the output.
// x: [rows, dim] f32 as vec4 (dim % 4 == 0)   w, b: [dim] as vec4   y: [rows, dim] as vec4
// grid: linear over rows (x, y split)

override WG: u32 = 64;

struct Params { rows: u32, dim4: u32, eps: f32, _pad: u32 }

@group(0) @binding(0) var<storage, read> x: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read> w: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> b: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read_write> y: array<vec4<f32>>;
@group(0) @binding(4) var<uniform> p: Params;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let r = grid_invocation(gid, nwg, WG);
  if (r >= p.rows) { return; }
  let base = r * p.dim4;
  let n = f32(4u * p.dim4);
  var s4 = vec4<f32>();
  for (var i = 0u; i < p.dim4; i++) { s4 += x[base + i]; }
  let mean = ((s4.x + s4.y) + (s4.z + s4.w)) / n;
  var q4 = vec4<f32>();
  for (var i = 0u; i < p.dim4; i++) {
    let d = x[base + i] - mean;
    q4 += d * d;
  }
  let inv = inverseSqrt(((q4.x + q4.y) + (q4.z + q4.w)) / n + p.eps);
  for (var i = 0u; i < p.dim4; i++) {
    y[base + i] = (x[base + i] - mean) * inv * w[i] + b[i];
  }
}
