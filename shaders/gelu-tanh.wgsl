// gelu-tanh.wgsl: y = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), elementwise.
// Matches torch GELU(approximate='tanh') (HF "gelu_pytorch_tanh", SigLIP's MLP activation).
// The tanh argument is clamped to [-15, 15] (tanh is exactly +-1 in f32 there) so large |x| cannot
// overflow x^3 into inf/inf = NaN.
// x: [n] f32   y: [n] f32   grid: linear over n / WG (x, y split)

override WG: u32 = 64;

struct Params { n: u32, _pad0: u32, _pad1: u32, _pad2: u32 }

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@group(0) @binding(2) var<uniform> p: Params;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = grid_invocation(gid, nwg, WG);
  if (i >= p.n) { return; }
  y[i] = gelu_tanh(x[i]);
}
