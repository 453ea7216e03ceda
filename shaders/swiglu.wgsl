// swiglu.wgsl: y = silu(gate) * up, with gate and up side by side in each input row
// (a fused gate_up projection, like vLLM's SiluAndMul): gate = x[r, 0..dim), up = x[r, dim..2 dim).
// Matches HF `LlamaMLP`: down_proj(act_fn(gate_proj(x)) * up_proj(x)) up to the down projection.
// x: [rows, 2 * dim] f32   y: [rows, dim] f32   grid: linear over rows * dim / WG (x, y split)

override WG: u32 = 64;

struct Params { rows: u32, dim: u32, _pad0: u32, _pad1: u32 }

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@group(0) @binding(2) var<uniform> p: Params;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = grid_invocation(gid, nwg, WG);
  if (i >= p.rows * p.dim) { return; }
  let r = i / p.dim;
  let c = i % p.dim;
  let gate = x[r * 2u * p.dim + c];
  let up = x[r * 2u * p.dim + p.dim + c];
  y[i] = silu(gate) * up;
}
