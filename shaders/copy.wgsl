// copy.wgsl: y = x, as vec4s. The bandwidth roofline that decode figures are compared with.
// x: [n4] vec4<f32>   y: [n4] vec4<f32>   grid: linear over n4 / WG (x, y split)

override WG: u32 = 64;

struct Params { n4: u32, _pad0: u32, _pad1: u32, _pad2: u32 }

@group(0) @binding(0) var<storage, read> x: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read_write> y: array<vec4<f32>>;
@group(0) @binding(2) var<uniform> p: Params;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = grid_invocation(gid, nwg, WG);
  if (i >= p.n4) { return; }
  y[i] = x[i];
}
