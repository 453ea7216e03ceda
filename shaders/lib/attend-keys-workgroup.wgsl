// lib/attend-keys-workgroup.wgsl: one workgroup's attention of GROUP query heads over a run of keys
// [begin, end) of one kv head, the loop of paged-attention-split-workgroup.wgsl and
// decode-attention-out.wgsl. The workgroup takes the keys KEYS at a time: each invocation scores one key
// against the group's heads (q in qShared, already scaled), then each invocation that owns an output vec4
// of a head folds the KEYS scores into its online softmax and accumulator. Invocation lid owns output
// vec4s lid, lid + KEYS, ... (OUTS of them) of the group's GROUP * HEAD_VEC4.
// Needs: HEAD_VEC4, GROUP, KEYS (= the workgroup size), OUTS; lib/online-softmax.wgsl; kCache and vCache
// ([numSlots, numKvHeads, D] as vec4) and kv_base(table, k, kvh) (lib/paged-kv.wgsl or the kernel's own).
// Every invocation calls attend_keys with the same begin and end (its loop has barriers).

var<workgroup> qShared: array<vec4<f32>, GROUP * HEAD_VEC4>;
var<workgroup> scores: array<f32, GROUP * KEYS>;
var<workgroup> keyBase: array<u32, KEYS>;

struct Attended { st: array<OnlineSoftmax, OUTS>, acc: array<vec4<f32>, OUTS> }

fn attend_keys(lid: u32, table: u32, kvh: u32, begin: u32, end: u32) -> Attended {
  var r: Attended;
  for (var o = 0u; o < OUTS; o++) {
    r.st[o] = online_softmax_start();
    r.acc[o] = vec4<f32>();
  }
  // The caller's qShared is complete.
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
          let w = online_softmax_add4(&r.st[o], s4, valid);
          var a = r.acc[o] * w.c + w.pr.x * vCache[keyBase[i] + d4];
          if (valid.y) { a += w.pr.y * vCache[keyBase[i + 1u] + d4]; }
          if (valid.z) { a += w.pr.z * vCache[keyBase[i + 2u] + d4]; }
          if (valid.w) { a += w.pr.w * vCache[keyBase[i + 3u] + d4]; }
          r.acc[o] = a;
        }
      }
    }
    workgroupBarrier();
  }
  return r;
}
