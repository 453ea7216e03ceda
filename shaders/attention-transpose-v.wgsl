// attention-transpose-v.wgsl: the V heads of one image, transposed for the P·V matmul of attention run as
// matmuls (src/kernels/vit-attention.ts, plan 'matmuls'), which reads both operands along the key axis:
//   vt[h, d, j] = V[j, head h0 + h, d]   for j < keys
//   vt[h, d, j] = 0                      for keys <= j < stride (padding: P is 0 there, and 0 * 0 stays 0)
// V[j, head, d] = qkv[vBase + j * row + head * D + d], vBase pointing at the image's first row's V part.
// One invocation per 4 consecutive j of one (h, d): a vec4 store.
//
// qkv: [rows, row] f32   vt: [heads, D, stride] f32 as vec4   grid: linear over heads * D * stride / 4

override WG: u32 = 64;

struct Params { heads: u32, headDim: u32, keys: u32, stride4: u32, row: u32, vBase: u32 }

@group(0) @binding(0) var<storage, read> qkv: array<f32>;
@group(0) @binding(1) var<storage, read_write> vt: array<vec4<f32>>;
@group(0) @binding(2) var<uniform> p: Params;

fn v_at(j: u32, hd: u32) -> f32 {
  if (j >= p.keys) { return 0.0; }
  return qkv[p.vBase + j * p.row + hd];
}

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = grid_invocation(gid, nwg, WG);
  if (i >= p.heads * p.headDim * p.stride4) { return; }
  let j = 4u * (i % p.stride4);
  let hd = i / p.stride4; // h * D + d: the column within the image's V heads
  vt[i] = vec4<f32>(v_at(j, hd), v_at(j + 1u, hd), v_at(j + 2u, hd), v_at(j + 3u, hd));
}
