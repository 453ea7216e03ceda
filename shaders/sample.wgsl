// sample.wgsl: temperature, top-k and top-p (nucleus) sampling of one token per row, on the GPU, so a
// decode step reads back only the sampled ids. One workgroup per row; each row has its own parameters
// (rows of one batched step belong to different requests). Matches the semantics of HF's
// TemperatureLogitsWarper -> TopKLogitsWarper -> TopPLogitsWarper -> multinomial, with ties at a
// threshold kept:
//   z = logits / temperature
//   top-k: keep z >= the k-th largest z (exact: bisection on the order-preserving u32 key of z)
//   top-p: keep the largest z whose softmax mass reaches topP (again a key threshold, by bisection)
//   draw u in [0, 1) from a hash of (seed, step) -- not of the row, so a request draws the same numbers
//   wherever the batch puts it -- and return the first kept index where the running sum of exp(z - max)
//   over kept entries, in vocabulary order, exceeds u * (their total).
// topK = 0 or >= vocab disables top-k; topP >= 1 disables top-p.
// Runs after argmax.wgsl in the same pass: a row with temperature <= 0 keeps argmax's greedy id, and a
// row argmax marked non-finite (0xffffffff) keeps that mark.
// logits: [rows, vocab] f32   rowParams: [rows] RowParams   out: [rows] u32   grid: rows workgroups (x, y split)

override WG: u32 = 256;

struct Params {
  rows: u32,
  vocab: u32,
  _pad0: u32,
  _pad1: u32,
}

struct RowParams {
  temperature: f32,
  topK: u32,
  topP: f32,
  seed: u32,
  step: u32,
  _pad0: u32,
  _pad1: u32,
  _pad2: u32,
}

@group(0) @binding(0) var<storage, read> logits: array<f32>;
@group(0) @binding(1) var<storage, read> rowParams: array<RowParams>;
@group(0) @binding(2) var<storage, read_write> out: array<u32>;
@group(0) @binding(3) var<uniform> p: Params;

var<workgroup> redU: array<u32, WG>;
var<workgroup> redF: array<f32, WG>;
var<workgroup> owner: u32;
var<workgroup> before: f32;
var<workgroup> rowShared: RowParams;
var<workgroup> skipShared: u32;

/** Order-preserving map from f32 to u32: a < b  <=>  key(a) < key(b) (for non-NaN). */
fn key_of(v: f32) -> u32 {
  let b = bitcast<u32>(v);
  return select(b | 0x80000000u, ~b, (b & 0x80000000u) != 0u);
}

fn pcg(v: u32) -> u32 {
  let s = v * 747796405u + 2891336453u;
  let w = ((s >> ((s >> 28u) + 4u)) ^ s) * 277803737u;
  return (w >> 22u) ^ w;
}

fn sum_u32(lid: u32, v: u32) -> u32 {
  redU[lid] = v;
  workgroupBarrier();
  for (var stride = WG / 2u; stride > 0u; stride = stride / 2u) {
    if (lid < stride) { redU[lid] += redU[lid + stride]; }
    workgroupBarrier();
  }
  // workgroupUniformLoad makes the result uniform, so later barriers may depend on it.
  return workgroupUniformLoad(&redU[0]);
}

fn max_u32(lid: u32, v: u32) -> u32 {
  redU[lid] = v;
  workgroupBarrier();
  for (var stride = WG / 2u; stride > 0u; stride = stride / 2u) {
    if (lid < stride) { redU[lid] = max(redU[lid], redU[lid + stride]); }
    workgroupBarrier();
  }
  return workgroupUniformLoad(&redU[0]);
}

fn sum_f32(lid: u32, v: f32) -> f32 {
  redF[lid] = v;
  workgroupBarrier();
  for (var stride = WG / 2u; stride > 0u; stride = stride / 2u) {
    if (lid < stride) { redF[lid] += redF[lid + stride]; }
    workgroupBarrier();
  }
  return workgroupUniformLoad(&redF[0]);
}

@compute @workgroup_size(WG)
fn main(
  @builtin(workgroup_id) wid: vec3<u32>,
  @builtin(num_workgroups) nwg: vec3<u32>,
  @builtin(local_invocation_index) lid: u32,
) {
  let row = wid.x + wid.y * nwg.x;
  if (row >= p.rows) { return; }
  // The row's parameters come from a storage buffer; workgroupUniformLoad makes them uniform so the
  // loops below (which hold barriers) may depend on them.
  if (lid == 0u) {
    rowShared = rowParams[row];
    skipShared = select(0u, 1u, !(rowShared.temperature > 0.0) || out[row] == 0xffffffffu);
  }
  if (workgroupUniformLoad(&skipShared) != 0u) { return; }
  let rp = workgroupUniformLoad(&rowShared);
  let base = row * p.vocab;
  let invT = 1.0 / rp.temperature;

  // Largest scaled logit.
  var km = 0u;
  for (var i = lid; i < p.vocab; i += WG) { km = max(km, key_of(logits[base + i] * invT)); }
  let maxKey = max_u32(lid, km);
  let zMax = bitcast<f32>(select(~maxKey, maxKey & 0x7fffffffu, (maxKey & 0x80000000u) != 0u));

  // Top-k: the largest key t with count(key >= t) >= topK is exactly the k-th largest key.
  var threshold = 0u;
  if (rp.topK > 0u && rp.topK < p.vocab) {
    for (var bit = 31i; bit >= 0i; bit--) {
      let cand = threshold | (1u << u32(bit));
      var n = 0u;
      for (var i = lid; i < p.vocab; i += WG) { n += select(0u, 1u, key_of(logits[base + i] * invT) >= cand); }
      if (sum_u32(lid, n) >= rp.topK) { threshold = cand; }
    }
  }

  // Top-p: the largest key t whose kept mass (key >= t) reaches topP of the top-k mass.
  if (rp.topP < 1.0) {
    var z = 0.0;
    for (var i = lid; i < p.vocab; i += WG) {
      let v = logits[base + i] * invT;
      if (key_of(v) >= threshold) { z += exp(v - zMax); }
    }
    let need = rp.topP * sum_f32(lid, z);
    // Largest t with mass(key >= max(t, top-k threshold)) >= need; monotone in t, so build it bit by bit.
    var tp = 0u;
    for (var bit = 31i; bit >= 0i; bit--) {
      let cand = tp | (1u << u32(bit));
      let cut = max(cand, threshold);
      var mass = 0.0;
      for (var i = lid; i < p.vocab; i += WG) {
        let v = logits[base + i] * invT;
        if (key_of(v) >= cut) { mass += exp(v - zMax); }
      }
      if (sum_f32(lid, mass) >= need) { tp = cand; }
    }
    threshold = max(threshold, tp);
  }

  // Draw: each invocation owns a contiguous chunk of the vocabulary; invocation 0 finds the chunk where
  // the running mass crosses u * total, and that chunk's owner walks it in order.
  let chunk = (p.vocab + WG - 1u) / WG;
  let start = min(lid * chunk, p.vocab);
  let stop = min(start + chunk, p.vocab);
  var mine = 0.0;
  for (var i = start; i < stop; i++) {
    let v = logits[base + i] * invT;
    if (key_of(v) >= threshold) { mine += exp(v - zMax); }
  }
  redF[lid] = mine;
  workgroupBarrier();
  if (lid == 0u) {
    var total = 0.0;
    for (var t = 0u; t < WG; t++) { total += redF[t]; }
    let u = f32(pcg(pcg(rp.seed ^ pcg(rp.step))) >> 8u) / 16777216.0;
    let goal = u * total;
    var prefix = 0.0;
    owner = 0xffffffffu;
    var lastNonEmpty = 0u;
    var lastPrefix = 0.0;
    for (var t = 0u; t < WG; t++) {
      let s = redF[t];
      if (s > 0.0) {
        lastNonEmpty = t;
        lastPrefix = prefix;
        if (owner == 0xffffffffu && prefix + s > goal) {
          owner = t;
          before = prefix - goal;
        }
      }
      prefix += s;
    }
    if (owner == 0xffffffffu) {
      // u * total rounded past the last chunk's end: take the last kept entry.
      owner = lastNonEmpty;
      before = -1e30;
    }
  }
  workgroupBarrier();
  if (lid == owner) {
    // `acc` starts at (prefix - goal) so the pick is the first entry where acc turns positive.
    var acc = before;
    var pick = start;
    for (var i = start; i < stop; i++) {
      let v = logits[base + i] * invT;
      if (key_of(v) >= threshold) {
        pick = i;
        acc += exp(v - zMax);
        if (acc > 0.0) { break; }
      }
    }
    out[row] = pick;
  }
}
