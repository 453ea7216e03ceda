// lib/reduce-rows.wgsl: sum a vec4 per row (ROWS rows, an override of the including kernel) over the
// WG invocations of a workgroup, in workgroup memory: a tree of log2(WG) barrier steps per row.
// reduce_rows(acc, lid) returns, in invocation m < ROWS, the workgroup total of acc[m] (other
// invocations get zeros). Every invocation must call it (it has barriers). WG is a power of two.
// The subgroup version (lib/reduce-rows-subgroups.wgsl) has the same signature.

const MAX_ROWS: u32 = 8u;

var<workgroup> red: array<vec4<f32>, WG>;
var<workgroup> rowTotals: array<vec4<f32>, MAX_ROWS>;

fn reduce_rows(acc: ptr<function, array<vec4<f32>, MAX_ROWS>>, lid: u32) -> vec4<f32> {
  for (var m = 0u; m < ROWS; m++) {
    red[lid] = (*acc)[m];
    workgroupBarrier();
    for (var s = WG / 2u; s > 0u; s >>= 1u) {
      if (lid < s) { red[lid] += red[lid + s]; }
      workgroupBarrier();
    }
    if (lid == 0u) { rowTotals[m] = red[0]; }
    workgroupBarrier();
  }
  if (lid < ROWS) { return rowTotals[lid]; }
  return vec4<f32>();
}
