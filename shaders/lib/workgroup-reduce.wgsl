// lib/workgroup-reduce.wgsl: the one-workgroup-per-row kernels' shared pieces (layer-norm.wgsl,
// rms-norm.wgsl, softmax.wgsl): the sum or the maximum of one f32 per invocation over the workgroup
// (the row itself is lib/grid.wgsl's grid_workgroup). Needs the including kernel's `override WG` (a
// power of two). The reductions have barriers: every invocation calls them, in uniform control flow.

var<workgroup> partial: array<f32, WG>;

/** Sum of `v` over the workgroup: a tree of log2(WG) barrier steps. */
fn workgroup_sum(lid: u32, v: f32) -> f32 {
  partial[lid] = v;
  workgroupBarrier();
  for (var stride = WG / 2u; stride > 0u; stride = stride / 2u) {
    if (lid < stride) { partial[lid] += partial[lid + stride]; }
    workgroupBarrier();
  }
  let total = partial[0];
  workgroupBarrier();
  return total;
}

/** Maximum of `v` over the workgroup, the same way. */
fn workgroup_max(lid: u32, v: f32) -> f32 {
  partial[lid] = v;
  workgroupBarrier();
  for (var stride = WG / 2u; stride > 0u; stride = stride / 2u) {
    if (lid < stride) { partial[lid] = max(partial[lid], partial[lid + stride]); }
    workgroupBarrier();
  }
  let total = partial[0];
  workgroupBarrier();
  return total;
}
