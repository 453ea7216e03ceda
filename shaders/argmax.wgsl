// argmax.wgsl: out[r] = the first index of the largest value in x[r, :] (torch.argmax semantics:
// ties go to the lowest index). One workgroup per row. A row holding any NaN or infinity has no answer:
// out[r] = 0xffffffff (NON_FINITE_TOKEN in argmax.ts), which the host turns into a named error instead
// of silently generating some id (broken weights, or a config such as rms_norm_eps 0).
// x: [rows, cols] f32   out: [rows] u32   grid: linear over rows (x, y split)

override WG: u32 = 64;

struct Params { rows: u32, cols: u32, _pad0: u32, _pad1: u32 }

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> out: array<u32>;
@group(0) @binding(2) var<uniform> p: Params;

var<workgroup> bestValue: array<f32, WG>;
var<workgroup> bestIndex: array<u32, WG>;
var<workgroup> nonFinite: atomic<u32>;  // workgroup memory starts zeroed

// NaN and ±inf have every exponent bit set (tested on the bits: WGSL may assume floats are finite).
fn is_non_finite(v: f32) -> bool {
  return (bitcast<u32>(v) & 0x7f800000u) == 0x7f800000u;
}

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
  let row = grid_workgroup(wid, nwg);
  if (row >= p.rows) { return; }
  let base = row * p.cols;
  var bv = -3.402823e38;
  var bi = 0xffffffffu;
  var bad = false;
  for (var i = lid; i < p.cols; i += WG) {
    let v = x[base + i];
    bad = bad || is_non_finite(v);
    if (better(v, i, bv, bi)) { bv = v; bi = i; }
  }
  if (bad) { atomicOr(&nonFinite, 1u); }
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
    out[row] = select(bestIndex[0], 0xffffffffu, atomicLoad(&nonFinite) != 0u);
  }
}
