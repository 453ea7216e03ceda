// paged-attention-split-workgroup.wgsl: the 'workgroup' plan of paged attention (src/kernels/paged-attention.ts),
// for GPUs: the same runs of keys and the same partials as paged-attention-split.wgsl (so
// paged-attention-combine.wgsl merges them), but one WORKGROUP per (run, token, kv head, group of query
// heads) instead of one invocation, which attends over its run as lib/attend-keys-workgroup.wgsl does. A
// decode step's handful of rows then keeps KEYS lanes busy per run instead of one (on an H200 the split
// plan spent ~56 us per layer on a decode step at position 81: nine invocations, each streaming 32 keys).
//
// qkv: [numTokens, rowStride] f32, q heads first   tokenSeq, tokenPos: [numTokens] u32
// blockTables: [numSeqs, maxBlocksPerSeq] u32      kCache, vCache: [numSlots, numKvHeads, D] f32
// partial: [numTokens, numHeads, MAX_SPLITS, 1 + D/4] vec4: (m, l, 0, 0) then the head's accumulator
// grid: linear over MAX_SPLITS * numTokens * numKvHeads * groupsPerKvHead workgroups (x, y split); the
// workgroups of a row's splits beyond its context leave.
// Prepended by the host: HEAD_VEC4, GROUP (query heads per workgroup), KEYS (= the workgroup size), OUTS
// (output vec4s per invocation: ceil(GROUP * HEAD_VEC4 / KEYS)), lib/online-softmax.wgsl, lib/paged-kv.wgsl,
// lib/attend-keys-workgroup.wgsl, lib/paged-splits.wgsl, lib/paged-attention-inputs.wgsl (Params and the
// inputs' bindings).

@group(0) @binding(6) var<storage, read_write> partial: array<vec4<f32>>;

var<workgroup> ctxShared: u32;

@compute @workgroup_size(KEYS)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let idx = grid_workgroup(wid, nwg);
  let rows = p.numTokens * p.numKvHeads * p.groupsPerKvHead;
  if (idx >= MAX_SPLITS * rows) { return; }
  let run = split_run(idx, rows, p.numKvHeads, p.groupsPerKvHead);
  let split = run.split;
  let sub = run.group;
  let kvh = run.kvHead;
  let t = run.token;
  if (lid == 0u) { ctxShared = tokenPos[t] + 1u; }
  // The context bounds every loop with a barrier in it, so it must be uniform over the workgroup.
  let ctx = workgroupUniformLoad(&ctxShared);
  let len = split_keys(ctx);
  let begin = split * len;
  if (begin >= ctx) { return; }
  let end = min(ctx, begin + len);
  let h0 = kvh * (p.numHeads / p.numKvHeads) + sub * GROUP;
  let table = tokenSeq[t] * p.maxBlocksPerSeq;
  let qBase = (t * p.rowStride) / 4u + h0 * HEAD_VEC4;
  for (var i = lid; i < GROUP * HEAD_VEC4; i += KEYS) { qShared[i] = qkv[qBase + i] * p.scale; }

  let r = attend_keys(lid, table, kvh, begin, end);
  for (var o = 0u; o < OUTS; o++) {
    let out = lid + o * KEYS;
    if (out < GROUP * HEAD_VEC4) {
      let g = out / HEAD_VEC4;
      let d4 = out % HEAD_VEC4;
      let base = ((t * p.numHeads + h0 + g) * MAX_SPLITS + split) * (1u + HEAD_VEC4);
      if (d4 == 0u) { partial[base] = vec4<f32>(r.st[o].m, r.st[o].l, 0.0, 0.0); }
      partial[base + 1u + d4] = r.acc[o];
    }
  }
}
