// decode-attention-out.wgsl: a decoder layer's attention and its output projection for decode rows, in one
// dispatch of the fused decode plan (src/kernels/decode-attention-out.ts). One workgroup per (row, kv head,
// group of GROUP query heads):
//   1. the group's attention over all the row's keys as one run (lib/attend-keys-workgroup.wgsl, the loop
//      of paged-attention-split-workgroup.wgsl), then out = acc / l, as paged-attention-combine.wgsl does
//      for one run;
//   2. that group's share of the output projection: part[row, group, n] = sum over the group's columns k of
//      a[k] · Wo[n, k], for every n. The next dispatch (decode-gate-up.wgsl) adds the groups' parts to the
//      residual: h + a · Woᵀ, summed by groups of heads instead of along all of K at once.
//
// qkv: [numTokens, rowStride] f32, q heads first   ints: u32, tokenSeq at seqOff, tokenPos at posOff, the
// block tables ([numSeqs, maxBlocksPerSeq]) at tableOff   kCache, vCache: [numSlots, numKvHeads, D] f32
// Wo: [H, numHeads D] in any storage format (lib/weights-*.wgsl prepended)
// part: [numTokens, numKvHeads groupsPerKvHead, H] f32 as vec4   grid: one workgroup per (row, kv head,
// group), linear (x, y split)
// Prepended by the host: HEAD_VEC4, GROUP, KEYS (= the workgroup size), OUTS (output vec4s per lane), the
// weights lib, lib/online-softmax.wgsl and lib/attend-keys-workgroup.wgsl.

struct Params {
  numTokens: u32, numHeads: u32, numKvHeads: u32, rowStride: u32,
  maxBlocksPerSeq: u32, blockSize: u32, scale: f32, groupsPerKvHead: u32,
  seqOff: u32, posOff: u32, tableOff: u32, H: u32,
}

@group(0) @binding(0) var<storage, read> qkv: array<vec4<f32>>;
// @binding(1) w_data and @binding(2) w_scales: declared by the lib/weights-*.wgsl in front of this file
@group(0) @binding(3) var<storage, read> ints: array<u32>;
@group(0) @binding(4) var<storage, read> kCache: array<vec4<f32>>;
@group(0) @binding(5) var<storage, read> vCache: array<vec4<f32>>;
@group(0) @binding(6) var<storage, read_write> part: array<vec4<f32>>;
@group(0) @binding(7) var<uniform> p: Params;

var<workgroup> attended: array<vec4<f32>, GROUP * HEAD_VEC4>;
var<workgroup> ctxShared: u32;

/** First vec4 of key/value k (of kv head kvh) of the sequence whose block table starts at ints[table] (lib/paged-kv.wgsl). */
fn kv_base(table: u32, k: u32, kvh: u32) -> u32 {
  let slot = ints[table + k / p.blockSize] * p.blockSize + k % p.blockSize;
  return (slot * p.numKvHeads + kvh) * HEAD_VEC4;
}

@compute @workgroup_size(KEYS)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let idx = grid_workgroup(wid, nwg);
  if (idx >= p.numTokens * p.numKvHeads * p.groupsPerKvHead) { return; }
  let t = idx / (p.groupsPerKvHead * p.numKvHeads);
  let kvh = (idx / p.groupsPerKvHead) % p.numKvHeads;
  let sub = idx % p.groupsPerKvHead;
  if (lid == 0u) { ctxShared = ints[p.posOff + t] + 1u; }
  // The context bounds every loop with a barrier in it, so it must be uniform over the workgroup.
  let ctx = workgroupUniformLoad(&ctxShared);
  let h0 = kvh * (p.numHeads / p.numKvHeads) + sub * GROUP;
  let table = p.tableOff + ints[p.seqOff + t] * p.maxBlocksPerSeq;
  let qBase = (t * p.rowStride) / 4u + h0 * HEAD_VEC4;
  for (var i = lid; i < GROUP * HEAD_VEC4; i += KEYS) { qShared[i] = qkv[qBase + i] * p.scale; }
  let r = attend_keys(lid, table, kvh, 0u, ctx);
  for (var o = 0u; o < OUTS; o++) {
    let out = lid + o * KEYS;
    if (out < GROUP * HEAD_VEC4) { attended[out] = r.acc[o] * online_softmax_inverse(r.st[o]); }
  }
  workgroupBarrier();
  // The group's columns of Wo (its heads' slice of K), four output rows of Wo per lane at a time.
  let K = p.numHeads * HEAD_VEC4 * 4u;
  let quads = p.H / 4u;
  for (var q = lid; q < quads; q += KEYS) {
    let r0 = w_row(4u * q, K);
    let r1 = w_row(4u * q + 1u, K);
    let r2 = w_row(4u * q + 2u, K);
    let r3 = w_row(4u * q + 3u, K);
    var sum = vec4<f32>();
    for (var k4 = 0u; k4 < GROUP * HEAD_VEC4; k4++) { sum += w_mul4(attended[k4], r0, r1, r2, r3, h0 * HEAD_VEC4 + k4); }
    part[idx * quads + q] = sum;
  }
}
