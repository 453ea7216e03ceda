// paged-attention-split.wgsl: the 'split' plan of paged attention (src/kernels/paged-attention.ts): each
// query row's keys 0..pos are cut into at most MAX_SPLITS runs of splitKeys(ctx) keys, and one invocation
// per (split, token, kv head, group of query heads) streams one run with an online softmax, leaving each
// head's (m, l) and unnormalised accumulator as a partial; paged-attention-combine.wgsl merges them.
// (flash decoding). Why: a decode step has a handful of rows, so one invocation per (row, head) leaves
// most of the device idle and its time grows with the context; and the query heads that share a kv head
// (GQA) take each K and V vec4 from one load (attention-head.ts attentionGroupSource). A row's splits
// depend on its own context length only, so a row gives the same result in any step it runs in.
//
// qkv: [numTokens, rowStride] f32, q heads first   tokenSeq, tokenPos: [numTokens] u32
// blockTables: [numSeqs, maxBlocksPerSeq] u32      kCache, vCache: [numSlots, numKvHeads, D] f32
// partial: [numTokens, numHeads, MAX_SPLITS, 1 + D/4] vec4: (m, l, 0, 0) then the head's accumulator
// grid: linear over MAX_SPLITS * numTokens * numKvHeads * groupsPerKvHead / WG (x, y split); the splits of a
// row beyond its context leave (the combine reads only the ones a row has).
// Prepended by the host: the Head code and the Group code (attention-head.ts), lib/online-softmax.wgsl,
// lib/paged-kv.wgsl, lib/paged-splits.wgsl, lib/paged-attention-inputs.wgsl (Params and the inputs' bindings).

override WG: u32 = 8;

@group(0) @binding(6) var<storage, read_write> partial: array<vec4<f32>>;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let idx = grid_invocation(gid, nwg, WG);
  let rows = p.numTokens * p.numKvHeads * p.groupsPerKvHead;
  if (idx >= MAX_SPLITS * rows) { return; }
  let run = split_run(idx, rows, p.numKvHeads, p.groupsPerKvHead);
  let split = run.split;
  let sub = run.group;
  let kvh = run.kvHead;
  let t = run.token;
  let ctx = tokenPos[t] + 1u;
  let len = split_keys(ctx);
  let begin = split * len;
  if (begin >= ctx) { return; }
  let end = min(ctx, begin + len);
  let h0 = kvh * (p.numHeads / p.numKvHeads) + sub * GROUP_HEADS;
  let table = tokenSeq[t] * p.maxBlocksPerSeq;
  let qs = group_load_q((t * p.rowStride) / 4u + h0 * HEAD_VEC4, p.scale);
  var st = group_start();
  let last = end - 1u;
  for (var j = begin; j < end; j += 4u) {
    let b = vec4<u32>(
      kv_base(table, j, kvh),
      kv_base(table, min(j + 1u, last), kvh),
      kv_base(table, min(j + 2u, last), kvh),
      kv_base(table, min(j + 3u, last), kvh),
    );
    group_add4(&st, qs, b, vec4<bool>(true, j + 1u < end, j + 2u < end, j + 3u < end));
  }
  let stride = MAX_SPLITS * (1u + HEAD_VEC4);
  group_store_partial(st, ((t * p.numHeads + h0) * MAX_SPLITS + split) * (1u + HEAD_VEC4), stride);
}
