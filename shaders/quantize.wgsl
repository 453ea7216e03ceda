// quantize.wgsl: pack rows of an f32 weight matrix into a storage format, on the GPU, at load time.
// src holds `rows` rows of W [N, K] (a chunk of a checkpoint tensor as it streams in); they are written
// as rows rowOffset .. rowOffset + rows of the packed target, whose layouts lib/weights-*.wgsl read:
//
//   main_f16  one invocation per 4 values: dst_data[n, k4] = (pack2x16float(w0, w1), pack2x16float(w2, w3))
//   main_q8   one invocation per group of 32: scale = max|w| / 127, q = clamp(round(w / scale), -127, 127)
//             dst_data [N, Kp / 4] u32 (4 int8)   dst_scales [N, Kp / 32] f32 (stored as its bits)
//   main_q4   one invocation per group of 32: (scale, min) = f16((max w - min w) / 15, min w), then
//             q = clamp(round((w - min) / scale), 0, 15) with the f16-rounded scale and min, so
//             q * scale + min is what the kernels compute   dst_data [N, Kp / 8] u32   dst_scales pack2x16float
// Kp = K rounded up to 32; columns K .. Kp of the last group are stored as q = 0 and never read.
// A group of zeros (scale 0) stores q = 0. The CPU reference is quantizeReference() in
// src/kernels/weight-format.ts (round half to even, as WGSL round() does).
//
// src: [rows, K] f32   grid: linear over rows * (K / 4) (f16) or rows * groups (q8, q4) / WG (x, y split)

override WG: u32 = 64;

struct Params { rows: u32, K: u32, rowOffset: u32, _pad: u32 }

@group(0) @binding(0) var<storage, read> src: array<f32>;
@group(0) @binding(1) var<storage, read_write> dst_data: array<u32>;
@group(0) @binding(2) var<storage, read_write> dst_scales: array<u32>;
@group(0) @binding(3) var<uniform> p: Params;


@compute @workgroup_size(WG)
fn main_f16(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let K4 = p.K / 4u;
  let i = grid_invocation(gid, nwg, WG);
  if (i >= p.rows * K4) { return; }
  let s = i * 4u; // row i / K4, column 4 (i % K4): the same as element 4 i of the row-major chunk
  let o = (p.rowOffset * K4 + i) * 2u;
  dst_data[o] = pack2x16float(vec2<f32>(src[s], src[s + 1u]));
  dst_data[o + 1u] = pack2x16float(vec2<f32>(src[s + 2u], src[s + 3u]));
}

struct GroupAt { r: u32, g: u32, groups: u32 }

/** Invocation i packs group i % groups of chunk row i / groups. */
fn group_at(i: u32) -> GroupAt {
  let groups = (p.K + 31u) / 32u;
  return GroupAt(i / groups, i % groups, groups);
}

/** Value j of group g of chunk row r, 0 past the row's end. */
fn group_value(r: u32, g: u32, j: u32) -> f32 {
  let k = g * 32u + j;
  if (k >= p.K) { return 0.0; }
  return src[r * p.K + k];
}

@compute @workgroup_size(WG)
fn main_q8(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let at = group_at(grid_invocation(gid, nwg, WG));
  if (at.r >= p.rows) { return; }
  let r = at.r;
  let g = at.g;
  let n = p.rowOffset + r;
  let groups = at.groups;
  var amax = 0.0;
  for (var j = 0u; j < 32u; j++) { amax = max(amax, abs(group_value(r, g, j))); }
  let scale = amax / 127.0;
  let inv = select(0.0, 1.0 / scale, scale > 0.0);
  for (var w = 0u; w < 8u; w++) {
    var word = 0u;
    for (var j = 0u; j < 4u; j++) {
      let q = i32(clamp(round(group_value(r, g, 4u * w + j) * inv), -127.0, 127.0));
      word |= (bitcast<u32>(q) & 255u) << (8u * j);
    }
    dst_data[(n * groups + g) * 8u + w] = word;
  }
  dst_scales[n * groups + g] = bitcast<u32>(scale);
}

@compute @workgroup_size(WG)
fn main_q4(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let at = group_at(grid_invocation(gid, nwg, WG));
  if (at.r >= p.rows) { return; }
  let r = at.r;
  let g = at.g;
  let n = p.rowOffset + r;
  let groups = at.groups;
  let count = min(32u, p.K - g * 32u);
  var lo = group_value(r, g, 0u);
  var hi = lo;
  for (var j = 1u; j < count; j++) {
    let v = group_value(r, g, j);
    lo = min(lo, v);
    hi = max(hi, v);
  }
  let packed = pack2x16float(vec2<f32>((hi - lo) / 15.0, lo));
  let sm = unpack2x16float(packed);
  let inv = select(0.0, 1.0 / sm.x, sm.x > 0.0);
  for (var w = 0u; w < 4u; w++) {
    var word = 0u;
    for (var j = 0u; j < 8u; j++) {
      let k = 8u * w + j;
      var q = 0u;
      if (k < count) { q = u32(clamp(round((group_value(r, g, k) - sm.y) * inv), 0.0, 15.0)); }
      word |= q << (4u * j);
    }
    dst_data[(n * groups + g) * 4u + w] = word;
  }
  dst_scales[n * groups + g] = packed;
}
