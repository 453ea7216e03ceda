// attention-split-heads.wgsl: the Q and K heads of one image copied out of the fused qkv rows into
// head-major blocks, for the QKᵀ matmul of attention run as matmuls (src/kernels/vit-attention.ts, plan
// 'matmuls'):
//   qk[0, h, t, :] = Q[t, head h0 + h, :]     qk[1, h, t, :] = K[t, head h0 + h, :]
// In qkv one head's rows are D floats every 3 * heads * D; the matmul reads each row many times, and
// contiguous blocks stream faster on CPU adapters than rows scattered over the whole buffer.
// qBase4 / kBase4: vec4 offsets in qkv of the image's first row's Q and K parts for head h0.
// qkv: [rows, row] f32 as vec4   qk: [2, heads, tokens, D] f32 as vec4   grid: linear over 2 * heads * tokens * D / 4

override WG: u32 = 64;

struct Params { heads: u32, tokens: u32, d4: u32, row4: u32, qBase4: u32, kBase4: u32 }

@group(0) @binding(0) var<storage, read> qkv: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read_write> qk: array<vec4<f32>>;
@group(0) @binding(2) var<uniform> p: Params;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = grid_invocation(gid, nwg, WG);
  let perPart = p.heads * p.tokens * p.d4;
  if (i >= 2u * perPart) { return; }
  let part = i / perPart;
  let r = i % perPart;
  let d = r % p.d4;
  let t = (r / p.d4) % p.tokens;
  let h = r / (p.d4 * p.tokens);
  qk[i] = qkv[select(p.qBase4, p.kBase4, part == 1u) + t * p.row4 + h * p.d4 + d];
}
