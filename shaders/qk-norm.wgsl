// qk-norm.wgsl: RMSNorm of each q head and each k head, in place (HF Qwen3 q_norm / k_norm: statistics in
// f32, the weight applied after normalising). One workgroup per (token, head) of the first qHeads + kHeads
// heads of a token's row; the v heads after them are left alone.
// x: [tokens, heads, headDim] f32 (the fused q|k|v rows)   w: [2, headDim] f32 (q_norm | k_norm)
// grid: linear over tokens * (qHeads + kHeads) (x, y split)
// Prepended by the host: lib/workgroup-reduce.wgsl (workgroup_sum).

override WG: u32 = 64;

struct Params { tokens: u32, heads: u32, q_heads: u32, k_heads: u32, head_dim: u32, eps: f32, _p0: u32, _p1: u32 }

@group(0) @binding(0) var<storage, read_write> x: array<f32>;
@group(0) @binding(1) var<storage, read> w: array<f32>;
@group(0) @binding(2) var<uniform> p: Params;

@compute @workgroup_size(WG)
fn main(
  @builtin(workgroup_id) wid: vec3<u32>,
  @builtin(num_workgroups) nwg: vec3<u32>,
  @builtin(local_invocation_index) lid: u32,
) {
  let normed = p.q_heads + p.k_heads;
  let item = grid_workgroup(wid, nwg);
  if (item >= p.tokens * normed) { return; }
  let token = item / normed;
  let head = item % normed;
  let base = (token * p.heads + head) * p.head_dim;
  // q heads take row 0 of w, k heads row 1.
  let wBase = select(p.head_dim, 0u, head < p.q_heads);
  var sq = 0.0;
  for (var i = lid; i < p.head_dim; i += WG) {
    let v = x[base + i];
    sq += v * v;
  }
  let inv = inverseSqrt(workgroup_sum(lid, sq) / f32(p.head_dim) + p.eps);
  for (var i = lid; i < p.head_dim; i += WG) {
    x[base + i] = w[wBase + i] * (x[base + i] * inv);
  }
}
