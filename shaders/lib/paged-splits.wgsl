// lib/paged-splits.wgsl: how the 'split' plan of paged attention cuts a query row's keys (ctx of them):
// into runs of split_keys(ctx) keys, a multiple of 4 and at least MIN_SPLIT_KEYS, so that a row has at
// most MAX_SPLITS runs. Shared by paged-attention-split.wgsl and paged-attention-combine.wgsl, and read by
// src/kernels/paged-attention.ts (wgslConstant) to size the partials.

const MAX_SPLITS: u32 = 16u;
const MIN_SPLIT_KEYS: u32 = 32u;

fn split_keys(ctx: u32) -> u32 {
  return max(MIN_SPLIT_KEYS, (ctx + 4u * MAX_SPLITS - 1u) / (4u * MAX_SPLITS) * 4u);
}
