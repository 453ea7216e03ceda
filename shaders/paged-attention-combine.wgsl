// paged-attention-combine.wgsl: the 'split' plan's second kernel: each (token, query head)'s partials
// (paged-attention-split.wgsl) merged into its attention output. With a run's (m_s, l_s, acc_s):
//   M = max_s m_s   w_s = exp(m_s - M)   out = (sum_s w_s acc_s) / (sum_s w_s l_s)   (0 when no key)
// partial: [numTokens, numHeads, MAX_SPLITS, 1 + D/4] vec4   tokenPos: [numTokens] u32
// out: [numTokens, numHeads * D] f32   grid: linear over numTokens * numHeads / WG (x, y split)
// lib/paged-splits.wgsl is prepended (how many runs a row has).

override WG: u32 = 64;

struct Params { numTokens: u32, numHeads: u32, headVec4: u32, _pad: u32 }

@group(0) @binding(0) var<storage, read> tokenPos: array<u32>;
@group(0) @binding(1) var<storage, read> partial: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> out: array<vec4<f32>>;
@group(0) @binding(3) var<uniform> p: Params;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let idx = grid_invocation(gid, nwg, WG);
  if (idx >= p.numTokens * p.numHeads) { return; }
  let t = idx / p.numHeads;
  let ctx = tokenPos[t] + 1u;
  let runs = (ctx + split_keys(ctx) - 1u) / split_keys(ctx);
  let step = 1u + p.headVec4;
  let base = idx * MAX_SPLITS * step;
  var m = partial[base].x;
  for (var s = 1u; s < runs; s++) { m = max(m, partial[base + s * step].x); }
  var l = 0.0;
  for (var s = 0u; s < runs; s++) {
    let ml = partial[base + s * step];
    l += ml.y * exp(ml.x - m);
  }
  let inv = select(0.0, 1.0 / l, l > 0.0);
  for (var i = 0u; i < p.headVec4; i++) {
    var acc = vec4<f32>();
    for (var s = 0u; s < runs; s++) { acc += partial[base + s * step + 1u + i] * exp(partial[base + s * step].x - m); }
    out[idx * p.headVec4 + i] = acc * inv;
  }
}
