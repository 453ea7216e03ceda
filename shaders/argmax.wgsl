// argmax.wgsl: out[r] = the first index of the largest value in x[r, :] (torch.argmax semantics:
// ties go to the lowest index). One workgroup per row; NaNs never win.
// x: [rows, cols] f32   out: [rows] u32   grid: linear over rows (x, y split)

override WG: u32 = 64;

struct Params { rows: u32, cols: u32, _pad0: u32, _pad1: u32 }

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> out: array<u32>;
@group(0) @binding(2) var<uniform> p: Params;

var<workgroup> bestValue: array<f32, WG>;
var<workgroup> bestIndex: array<u32, WG>;

// (v, i) beats (bv, bi) when it is larger, or equal with a lower index.
fn better(v: f32, i: u32, bv: f32, bi: u32) -> bool {
  return v > bv || (v == bv && i < bi);
}

@compute @workgroup_size(WG)
fn main(
  @builtin(workgroup_id) wid: vec3<u32>,
  @builtin(num_workgroups) nwg: vec3<u32>,
  @builtin(local_invocation_index) lid: u32,
) {
  let row = wid.x + wid.y * nwg.x;
  if (row >= p.rows) { return; }
  let base = row * p.cols;
  var bv = -3.402823e38;
  var bi = 0xffffffffu;
  for (var i = lid; i < p.cols; i += WG) {
    let v = x[base + i];
    if (better(v, i, bv, bi)) { bv = v; bi = i; }
  }
  bestValue[lid] = bv;
  bestIndex[lid] = bi;
  workgroupBarrier();
  for (var stride = WG / 2u; stride > 0u; stride = stride / 2u) {
    if (lid < stride) {
      let ov = bestValue[lid + stride];
      let oi = bestIndex[lid + stride];
      if (better(ov, oi, bestValue[lid], bestIndex[lid])) {
        bestValue[lid] = ov;
        bestIndex[lid] = oi;
      }
    }
    workgroupBarrier();
  }
  if (lid == 0u) {
    // A row of only NaNs (or -inf) has no winner: report index 0 like a row of equal values.
    out[row] = select(bestIndex[0], 0u, bestIndex[0] == 0xffffffffu);
  }
}
