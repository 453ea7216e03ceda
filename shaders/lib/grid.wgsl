// grid.wgsl: where a workgroup or an invocation sits in a linear grid, the one src/kernels/checks.ts
// linearGrid builds (numWorkgroups split over x and y to stay within the per-dimension limit).
// createDispatch (src/kernels/dispatch.ts) appends this file to every kernel.

// Index of workgroup `wid` in the linear order: the row of a kernel that gives each workgroup one row.
fn grid_workgroup(wid: vec3<u32>, nwg: vec3<u32>) -> u32 {
  return wid.x + wid.y * nwg.x;
}

// Index of invocation `gid` in the linear order, for workgroups of `wg` invocations.
fn grid_invocation(gid: vec3<u32>, nwg: vec3<u32>, wg: u32) -> u32 {
  return gid.x + gid.y * nwg.x * wg;
}
