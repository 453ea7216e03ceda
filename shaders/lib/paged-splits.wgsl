// lib/paged-splits.wgsl: how the 'split' plan of paged attention cuts a query row's keys (ctx of them):
// into runs of split_keys(ctx) keys, a multiple of 4 and at least MIN_SPLIT_KEYS, so that a row has at
// most MAX_SPLITS runs. Shared by paged-attention-split.wgsl and paged-attention-combine.wgsl, and read by
// src/kernels/paged-attention.ts (wgslConstant) to size the partials.

const MAX_SPLITS: u32 = 16u;
const MIN_SPLIT_KEYS: u32 = 32u;

/** A run of the split plans' grids (paged-attention-split.wgsl, paged-attention-split-workgroup.wgsl). */
struct SplitRun { split: u32, token: u32, kvHead: u32, group: u32 }

/**
 * Run `idx` of a grid over MAX_SPLITS * rows runs, rows = numTokens * numKvHeads * groupsPerKvHead. The
 * split is the slowest index: the runs of every row's first splits are adjacent, so the work of short
 * contexts sits in few workgroups and long ones spread over many.
 */
fn split_run(idx: u32, rows: u32, numKvHeads: u32, groupsPerKvHead: u32) -> SplitRun {
  let r = idx % rows;
  return SplitRun(idx / rows, r / (groupsPerKvHead * numKvHeads), (r / groupsPerKvHead) % numKvHeads, r % groupsPerKvHead);
}

fn split_keys(ctx: u32) -> u32 {
  return max(MIN_SPLIT_KEYS, (ctx + 4u * MAX_SPLITS - 1u) / (4u * MAX_SPLITS) * 4u);
}
