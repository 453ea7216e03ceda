// paged-attention-split-workgroup.wgsl: the 'workgroup' plan of paged attention (src/kernels/paged-attention.ts),
// for GPUs: the same runs of keys and the same partials as paged-attention-split.wgsl (so
// paged-attention-combine.wgsl merges them), but one WORKGROUP per (run, token, kv head, group of query
// heads) instead of one invocation. The workgroup takes its run's keys KEYS at a time: each invocation
// scores one key against the group's query heads (q in workgroup memory), then each invocation that owns an
// output vec4 of a head folds the KEYS scores into its online softmax and accumulator. A decode step's
// handful of rows then keeps KEYS lanes busy per run instead of one (on an H200 the split plan spent
// ~56 us per layer on a decode step at position 81: nine invocations, each streaming 32 keys).
//
// qkv: [numTokens, rowStride] f32, q heads first   tokenSeq, tokenPos: [numTokens] u32
// blockTables: [numSeqs, maxBlocksPerSeq] u32      kCache, vCache: [numSlots, numKvHeads, D] f32
// partial: [numTokens, numHeads, MAX_SPLITS, 1 + D/4] vec4: (m, l, 0, 0) then the head's accumulator
// grid: linear over MAX_SPLITS * numTokens * numKvHeads * groupsPerKvHead workgroups (x, y split); the
// workgroups of a row's splits beyond its context leave.
// Prepended by the host: HEAD_VEC4, GROUP (query heads per workgroup), KEYS (= the workgroup size), OUTS
// (output vec4s per invocation: ceil(GROUP * HEAD_VEC4 / KEYS)), lib/online-softmax.wgsl, lib/paged-kv.wgsl,
// lib/paged-splits.wgsl, lib/paged-attention-inputs.wgsl (Params and the inputs' bindings).

@group(0) @binding(6) var<storage, read_write> partial: array<vec4<f32>>;

var<workgroup> qShared: array<vec4<f32>, GROUP * HEAD_VEC4>;
var<workgroup> scores: array<f32, GROUP * KEYS>;
var<workgroup> keyBase: array<u32, KEYS>;
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

  var st: array<OnlineSoftmax, OUTS>;
  var acc: array<vec4<f32>, OUTS>;
  for (var o = 0u; o < OUTS; o++) {
    st[o] = online_softmax_start();
    acc[o] = vec4<f32>();
  }
  workgroupBarrier();
  for (var c = begin; c < end; c += KEYS) {
    let j = c + lid;
    if (j < end) {
      let kb = kv_base(table, j, kvh);
      keyBase[lid] = kb;
      for (var g = 0u; g < GROUP; g++) {
        var s = 0.0;
        for (var d = 0u; d < HEAD_VEC4; d++) { s += dot(qShared[g * HEAD_VEC4 + d], kCache[kb + d]); }
        scores[g * KEYS + lid] = s;
      }
    }
    workgroupBarrier();
    let n = min(KEYS, end - c);
    for (var o = 0u; o < OUTS; o++) {
      let out = lid + o * KEYS;
      if (out < GROUP * HEAD_VEC4) {
        let g = out / HEAD_VEC4;
        let d4 = out % HEAD_VEC4;
        // Four keys at a time through the shared online softmax (the last four padded with invalid keys).
        for (var i = 0u; i < n; i += 4u) {
          let valid = vec4<bool>(true, i + 1u < n, i + 2u < n, i + 3u < n);
          let s4 = vec4<f32>(
            scores[g * KEYS + i],
            scores[g * KEYS + min(i + 1u, n - 1u)],
            scores[g * KEYS + min(i + 2u, n - 1u)],
            scores[g * KEYS + min(i + 3u, n - 1u)],
          );
          let w = online_softmax_add4(&st[o], s4, valid);
          var a = acc[o] * w.c + w.pr.x * vCache[keyBase[i] + d4];
          if (valid.y) { a += w.pr.y * vCache[keyBase[i + 1u] + d4]; }
          if (valid.z) { a += w.pr.z * vCache[keyBase[i + 2u] + d4]; }
          if (valid.w) { a += w.pr.w * vCache[keyBase[i + 3u] + d4]; }
          acc[o] = a;
        }
      }
    }
    workgroupBarrier();
  }
  for (var o = 0u; o < OUTS; o++) {
    let out = lid + o * KEYS;
    if (out < GROUP * HEAD_VEC4) {
      let g = out / HEAD_VEC4;
      let d4 = out % HEAD_VEC4;
      let base = ((t * p.numHeads + h0 + g) * MAX_SPLITS + split) * (1u + HEAD_VEC4);
      if (d4 == 0u) { partial[base] = vec4<f32>(st[o].m, st[o].l, 0.0, 0.0); }
      partial[base + 1u + d4] = acc[o];
    }
  }
}
