// vit-attention.wgsl: bidirectional multi-head attention for the ViT, any head_dim D (multiple of 4), with
// a key mask. Matches HF `SiglipAttention` (eager): softmax(q kᵀ * scale + mask) v, masked keys get no
// weight. Flash-style: one invocation per (image, query token, head) streams every key once with an
// online softmax (lib/online-softmax.wgsl), 4 keys per step, so no [T, T] score matrix is ever stored and
// no workgroup memory or barrier is needed. The head (q and the accumulator, D floats each) lives in
// registers: `Head` and the head_* functions are generated for D by src/kernels/attention-head.ts and
// prepended to this file, reading Q, K and V from `qkv` and writing `out`.
//
// qkv:  [batch * tokens, 3 * heads * D] f32, each row = q | k | v (HF q_proj, k_proj, v_proj outputs)
// mask: [batch * tokens] u32, 1 = real patch, 0 = padding (never attended to)
// out:  [batch * tokens, heads * D] f32
// Consecutive invocations are consecutive queries of one head, so a SIMD group reads the same keys.
// A query whose keys are all masked gets zeros. grid: linear over batch * tokens * heads / WG (x, y split)

// Params, qkv, mask, out and WG: lib/vit-attention-inputs.wgsl, prepended by the host.

fn key_valid(keyBase: u32, j: u32) -> bool {
  return j < p.tokens && mask[keyBase + j] != 0u;
}

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let idx = grid_invocation(gid, nwg, WG);
  if (idx >= p.batch * p.tokens * p.heads) { return; }
  let t = idx % p.tokens;
  let h = (idx / p.tokens) % p.heads;
  let b = idx / (p.tokens * p.heads);
  // Offsets in vec4s: a row holds 3 * heads heads of HEAD_VEC4 vec4s each.
  let row4 = 3u * p.heads * HEAD_VEC4;
  let kOff = (p.heads + h) * HEAD_VEC4;
  let vOff = (2u * p.heads + h) * HEAD_VEC4;
  let keyBase = b * p.tokens;
  let q = head_load_q((keyBase + t) * row4 + h * HEAD_VEC4, p.scale);
  var acc = head_zero();
  var sm = online_softmax_start();
  let last = p.tokens - 1u;
  for (var j = 0u; j < p.tokens; j += 4u) {
    let rows = (vec4<u32>(keyBase) + min(vec4<u32>(j, j + 1u, j + 2u, j + 3u), vec4<u32>(last))) * row4;
    let valid = vec4<bool>(key_valid(keyBase, j), key_valid(keyBase, j + 1u), key_valid(keyBase, j + 2u), key_valid(keyBase, j + 3u));
    let w = online_softmax_add4(&sm, head_scores4(q, rows + vec4<u32>(kOff)), valid);
    acc = head_accumulate4(acc, w.c, w.pr, rows + vec4<u32>(vOff));
  }
  head_store(((keyBase + t) * p.heads + h) * HEAD_VEC4, acc, online_softmax_inverse(sm));
}
