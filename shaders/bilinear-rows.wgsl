// bilinear-rows.wgsl: out[n, :] += Σ_k w[k, n] · table[idx[k, n], :] over the four corners k of each row's
// bilinear interpolation (Qwen3-VL's learned position grid resampled to an image's patch grid). The sum
// runs in the order k = 0, 1, 2, 3, as HF adds the four weighted corners.
// table: [tableRows, dim] f32   idx: [4, rows] u32 (each < tableRows)   w: [4, rows] f32   out: [rows, dim] f32
// grid: linear over rows * dim / WG (x, y split)

override WG: u32 = 64;

struct Params { rows: u32, dim: u32, _p0: u32, _p1: u32 }

@group(0) @binding(0) var<storage, read> table: array<f32>;
@group(0) @binding(1) var<storage, read> idx: array<u32>;
@group(0) @binding(2) var<storage, read> w: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;
@group(0) @binding(4) var<uniform> p: Params;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = grid_invocation(gid, nwg, WG);
  if (i >= p.rows * p.dim) { return; }
  let n = i / p.dim;
  let d = i % p.dim;
  var acc = w[n] * table[idx[n] * p.dim + d];
  for (var k = 1u; k < 4u; k++) {
    acc += w[k * p.rows + n] * table[idx[k * p.rows + n] * p.dim + d];
  }
  out[i] += acc;
}
