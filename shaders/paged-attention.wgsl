// paged-attention.wgsl: causal attention of new tokens over a paged KV cache, for prefill chunks and
// decode steps alike (a decode step is a chunk of one token per sequence). Matches HF `LlamaAttention`
// (eager, GQA by repeat_kv): query token t at absolute position pos attends keys 0..pos of its sequence,
// whose K/V rows sit in fixed-size blocks listed by its block table (vLLM PagedAttention layout):
//
//   key k of sequence s  ->  slot = blockTables[s, k / blockSize] * blockSize + k % blockSize
//
// The 'stream' plan: one invocation per (token, query head) streams the keys with an online softmax
// (lib/online-softmax.wgsl),
// 4 at a time; kv head = query head / (numHeads / numKvHeads). Any head_dim D (multiple of 4): `Head` and
// the head_* functions are generated for D by src/kernels/attention-head.ts and prepended, reading Q from
// `qkv`, K from `kCache`, V from `vCache` and writing `out`. The keys of this step must already be in
// the cache (kv-write runs first in the same pass).
//
// qkv: [numTokens, rowStride] f32, q heads at the start of each row   tokenSeq, tokenPos: [numTokens] u32
// blockTables: [numSeqs, maxBlocksPerSeq] u32   kCache, vCache: [numSlots, numKvHeads, D] f32
// out: [numTokens, numHeads * D] f32   grid: linear over numTokens * numHeads / WG (x, y split)
// Prepended by the host: the Head code, lib/online-softmax.wgsl, lib/paged-kv.wgsl and
// lib/paged-attention-inputs.wgsl (Params and the inputs' bindings).

override WG: u32 = 64;

@group(0) @binding(6) var<storage, read_write> out: array<vec4<f32>>;

// kv_base(table, k, kvh): lib/paged-kv.wgsl, appended by src/kernels/paged-attention.ts.

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let idx = grid_invocation(gid, nwg, WG);
  if (idx >= p.numTokens * p.numHeads) { return; }
  let h = idx % p.numHeads;
  let t = idx / p.numHeads;
  let kvh = h / (p.numHeads / p.numKvHeads);
  let table = tokenSeq[t] * p.maxBlocksPerSeq;
  let ctx = tokenPos[t] + 1u;
  let q = head_load_q((t * p.rowStride) / 4u + h * HEAD_VEC4, p.scale);
  var acc = head_zero();
  var sm = online_softmax_start();
  let last = ctx - 1u;
  for (var j = 0u; j < ctx; j += 4u) {
    let b = vec4<u32>(
      kv_base(table, j, kvh),
      kv_base(table, min(j + 1u, last), kvh),
      kv_base(table, min(j + 2u, last), kvh),
      kv_base(table, min(j + 3u, last), kvh),
    );
    let valid = vec4<bool>(true, j + 1u < ctx, j + 2u < ctx, j + 3u < ctx);
    let w = online_softmax_add4(&sm, head_scores4(q, b), valid);
    acc = head_accumulate4(acc, w.c, w.pr, b);
  }
  head_store(idx * HEAD_VEC4, acc, online_softmax_inverse(sm));
}
