// lib/paged-kv.wgsl: where key k of a sequence sits in a paged KV cache (vLLM PagedAttention layout), for
// the attention kernels that read it. Needs the kernel's `blockTables` binding and a Params `p` with
// blockSize and numKvHeads, and HEAD_VEC4 (src/kernels/attention-head.ts).
//
//   key k of sequence s  ->  slot = blockTables[s, k / blockSize] * blockSize + k % blockSize

/** First vec4 of key/value k (of kv head kvh) of the sequence whose block table starts at `table`. */
fn kv_base(table: u32, k: u32, kvh: u32) -> u32 {
  let slot = blockTables[table + k / p.blockSize] * p.blockSize + k % p.blockSize;
  return (slot * p.numKvHeads + kvh) * HEAD_VEC4;
}
