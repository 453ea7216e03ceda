// lib/reduce-rows-subgroups.wgsl: reduce_rows() of lib/reduce-rows.wgsl with subgroup operations (the
// kernel's source starts with `enable subgroups;`): each subgroup adds its lanes with subgroupAdd, one
// elected lane per subgroup claims a slot with an atomic counter (no assumption about how invocations
// map to subgroups) and stores the subgroup's sums there, and after one barrier invocation m < ROWS adds
// row m over the slots. Subgroups have at least 4 lanes (WebGPU's minimum), so there are at most WG / 4
// slots of ROWS <= MAX_ROWS rows: 2 * WG vec4s.

const MAX_ROWS: u32 = 8u;

var<workgroup> red: array<vec4<f32>, WG * 2u>;
var<workgroup> numSlots: atomic<u32>;

fn reduce_rows(acc: ptr<function, array<vec4<f32>, MAX_ROWS>>, lid: u32) -> vec4<f32> {
  var sums: array<vec4<f32>, MAX_ROWS>;
  for (var m = 0u; m < ROWS; m++) { sums[m] = subgroupAdd((*acc)[m]); }
  if (subgroupElect()) {
    let slot = atomicAdd(&numSlots, 1u);
    for (var m = 0u; m < ROWS; m++) { red[slot * ROWS + m] = sums[m]; }
  }
  workgroupBarrier();
  var total = vec4<f32>();
  if (lid < ROWS) {
    let n = atomicLoad(&numSlots);
    for (var s = 0u; s < n; s++) { total += red[s * ROWS + lid]; }
  }
  return total;
}
