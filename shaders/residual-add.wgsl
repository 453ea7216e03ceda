// residual-add.wgsl: acc += x, elementwise and in place (the residual stream of a transformer layer).
// acc: [n] f32 (read and written)   x: [n] f32   grid: linear over n / WG (x, y split)

override WG: u32 = 64;

struct Params { n: u32, _pad0: u32, _pad1: u32, _pad2: u32 }

@group(0) @binding(0) var<storage, read_write> acc: array<f32>;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<uniform> p: Params;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = grid_invocation(gid, nwg, WG);
  if (i >= p.n) { return; }
  acc[i] = acc[i] + x[i];
}
