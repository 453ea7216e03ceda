// sample.wgsl: temperature, top-k and top-p (nucleus) sampling of one token per row, on the GPU, so a
// decode step reads back only the sampled ids. One workgroup per row; each row has its own parameters
// (rows of one batched step belong to different requests). Matches the semantics of HF's
// TemperatureLogitsWarper -> TopKLogitsWarper -> TopPLogitsWarper -> multinomial, with ties at a
// threshold kept:
//   z = logits * (1 / temperature) in f32, w = exp(z - max z)
//   top-k: keep z >= the k-th largest z (exact, on the order-preserving u32 key of z)
//   top-p: keep the largest z whose w mass reaches topP of the kept mass (again a key threshold)
//   draw u in [0, 1) from a hash of (seed, step) -- not of the row, so a request draws the same numbers
//   wherever the batch puts it -- and return the first kept index where the running sum of w over kept
//   entries, in vocabulary order, exceeds u * (their total).
// topK = 0 or >= vocab disables top-k; topP >= 1 disables top-p.
// Runs after argmax.wgsl in the same pass: a row with temperature <= 0 keeps argmax's greedy id, a row
// argmax marked non-finite (0xffffffff) keeps that mark, and argmax's id gives max z (x -> x * (1 / T)
// rounds monotonically, so the largest logit gives the largest z): no pass of its own.
//
// Masses are sums of w in fixed point: units of 2^-40, 64 bits in two u32 words (w = 1 is 2^40, so a row
// of fewer than 2^24 entries cannot overflow). Integer sums are exact, so the order of addition does not
// matter: histogram atomics, per-candidate sums and the draw's chunked running sum all equal a sequential
// sum in vocabulary order. They differ from sampleReference's float64 sums by under 2^-40 per entry (and
// exp's own rounding); u * total and topP * total are rounded to f32.
//
// How the thresholds are found (radix select, 8-bit digits from the top of the key):
//   narrow: a pass over the row builds a 256-bin histogram (count, and mass for top-p) of the next digit
//     of the keys still open; invocation 0 walks it from the top to the bin holding the threshold (the
//     k-th largest key, or where the mass above reaches topP * total). Up to 4 passes.
//   gather: as soon as the keys >= that bin fit in CAP workgroup slots, one pass copies them (index, key,
//     w) into workgroup memory; else once the bin alone fits, only the bin. The threshold is then found
//     among the candidates (O(CAP^2 / WG) per invocation, no further pass).
//   draw: when the candidates hold every kept key, among them; else one pass over the row, each
//     invocation owning a contiguous chunk, and the chunk where the running sum crosses u * total walked.
// Passes over the row: temperature only, one; top-k 50 at vocab 49280, typically three (two histograms
// and a gather; top-p and the draw then run among the candidates); top-p 0.9 over a nucleus of thousands,
// four (two histograms, a gather of the bin, the draw). At most eleven: four histograms and a gather per
// threshold, then the draw (ties past CAP, e.g. all-equal logits, resolve all four digits).
// logits: [rows, vocab] f32   rowParams: [rows] RowParams   out: [rows] u32   grid: rows workgroups (x, y split)

// 64 by default: on a CPU adapter (SwiftShader) a workgroup runs on one thread and every barrier switches
// between all its invocations, so more of them only costs; real GPUs read a row fast enough at 64.
override WG: u32 = 64;
// Candidate slots in workgroup memory (16 bytes each). sample.ts checks the total against the device.
override CAP: u32 = 512;

const BINS: u32 = 256u;
const MASS_ONE_HI: f32 = 256.0;  // the high word of w * 2^40 is floor(w * 2^8)
const TWO_32: f32 = 4294967296.0;
const NONE: u32 = 0xffffffffu;

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

// Where a radix select stands. Keys in [lo, hi] are still open (lo, hi share every bit above `shift + 8`);
// countAbove / massAbove cover the keys > hi that the stage counts.
struct Narrow {
  lo: u32,
  hi: u32,
  shift: u32,
  // 0: another pass; 1: gather every key >= lo; 2: gather [lo, hi]; 3: resolved, the threshold is lo
  action: u32,
  countAbove: u32,
  // keys the stage counts in [lo, hi]
  inBin: u32,
  massAbove: vec2<u32>,
  // top-p: topP * (mass of the keys the stage counts), set by the first pass
  need: vec2<u32>,
}

struct RowState {
  params: RowParams,
  skip: u32,
  invT: f32,
  zMax: f32,
}

struct Owner {
  lid: u32,
  // 1: u * total rounded to the total or past it; the owner takes its last kept entry
  last: u32,
  before: vec2<u32>,
  goal: vec2<u32>,
}

@group(0) @binding(0) var<storage, read> logits: array<f32>;
@group(0) @binding(1) var<storage, read> rowParams: array<RowParams>;
@group(0) @binding(2) var<storage, read_write> out: array<u32>;
@group(0) @binding(3) var<uniform> p: Params;

var<workgroup> histCount: array<atomic<u32>, BINS>;
var<workgroup> histLo: array<atomic<u32>, BINS>;
var<workgroup> histHi: array<atomic<u32>, BINS>;
var<workgroup> candKey: array<u32, CAP>;
var<workgroup> candIndex: array<u32, CAP>;
var<workgroup> candW: array<vec2<u32>, CAP>;
var<workgroup> numCand: atomic<u32>;
var<workgroup> bestK: atomic<u32>;
var<workgroup> bestP: atomic<u32>;
var<workgroup> lastChunk: atomic<u32>;
var<workgroup> partial: array<vec2<u32>, WG>;
var<workgroup> rowShared: RowState;
var<workgroup> narrowShared: Narrow;
var<workgroup> ownerShared: Owner;
var<workgroup> scalarShared: u32;

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

// 64-bit unsigned integers as vec2(low word, high word).
fn add64(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
  let lo = a.x + b.x;
  return vec2<u32>(lo, a.y + b.y + select(0u, 1u, lo < a.x));
}

fn ge64(a: vec2<u32>, b: vec2<u32>) -> bool {
  return a.y > b.y || (a.y == b.y && a.x >= b.x);
}

/** topP * total rounded in f32 can pass the total itself; the kept mass never has to exceed all of it. */
fn min_need(need: vec2<u32>, total: vec2<u32>) -> vec2<u32> {
  return select(need, total, ge64(need, total));
}

fn to_f32(a: vec2<u32>) -> f32 {
  return f32(a.y) * TWO_32 + f32(a.x);
}

/** A non-negative f32 as a 64-bit integer (truncated). */
fn from_f32(f: f32) -> vec2<u32> {
  let hi = floor(f / TWO_32);
  return vec2<u32>(u32(f - hi * TWO_32), u32(hi));
}

/** w = exp(z - zMax) in 2^-40 units: both words are exact (fract and scaling by 2^32 are exact). */
fn weight(z: f32, zMax: f32) -> vec2<u32> {
  let s = exp(z - zMax) * MASS_ONE_HI;
  let hi = floor(s);
  return vec2<u32>(u32((s - hi) * TWO_32), u32(hi));
}

/** Exact atomic 64-bit add into histogram bin d: the low word's carry goes to the high word. */
fn add_mass(d: u32, w: vec2<u32>) {
  let old = atomicAdd(&histLo[d], w.x);
  let hi = w.y + select(0u, 1u, old + w.x < old);
  if (hi != 0u) { atomicAdd(&histHi[d], hi); }
}

/**
 * Invocation 0, after a histogram pass: find the bin holding the threshold, clear the histogram for the
 * next pass, and decide what comes next. Top-k (topP < 0): the bin where the count from the top reaches
 * `goalCount`. Top-p: where the mass from the top reaches `need` (computed here on the first pass).
 */
fn narrow_scan(s: Narrow, goalCount: u32, topP: f32) -> Narrow {
  var r = s;
  let withMass = topP >= 0.0;
  if (withMass && s.shift == 24u) {
    var total = vec2<u32>(0u, 0u);
    for (var d = 0u; d < BINS; d++) { total = add64(total, vec2<u32>(atomicLoad(&histLo[d]), atomicLoad(&histHi[d]))); }
    r.need = min_need(from_f32(topP * to_f32(total)), total);
  }
  var count = s.countAbove;
  var mass = s.massAbove;
  var pick = NONE;
  // If rounding leaves no bin reaching the goal, the lowest non-empty bin (keep everything still open).
  var lowest = NONE;
  var lowestCount = 0u;
  var lowestMass = vec2<u32>(0u, 0u);
  for (var i = 0u; i < BINS; i++) {
    let d = BINS - 1u - i;
    let c = atomicLoad(&histCount[d]);
    let m = vec2<u32>(atomicLoad(&histLo[d]), atomicLoad(&histHi[d]));
    atomicStore(&histCount[d], 0u);
    atomicStore(&histLo[d], 0u);
    atomicStore(&histHi[d], 0u);
    if (pick != NONE || c == 0u) { continue; }
    let reached = select(count + c >= goalCount, ge64(add64(mass, m), r.need), withMass);
    if (reached) {
      pick = d;
      r.countAbove = count;
      r.massAbove = mass;
      r.inBin = c;
    } else {
      lowest = d;
      lowestCount = count;
      lowestMass = mass;
      count += c;
      mass = add64(mass, m);
    }
  }
  if (pick == NONE) {
    pick = select(lowest, 0u, lowest == NONE);
    r.countAbove = lowestCount;
    r.massAbove = lowestMass;
    r.inBin = count - lowestCount;
  }
  let inBin = r.inBin;
  r.lo = s.lo + (pick << s.shift);
  r.hi = r.lo + ((1u << s.shift) - 1u);
  if (r.countAbove + inBin <= CAP) {
    r.action = 1u;
  } else if (inBin <= CAP) {
    r.action = 2u;
  } else if (s.shift == 0u) {
    r.action = 3u;
  } else {
    r.action = 0u;
    r.shift = s.shift - 8u;
  }
  atomicStore(&numCand, 0u);
  return r;
}

/** Radix select over the keys >= cut; returns with the threshold's bin (or the threshold itself). */
fn narrow(lid: u32, base: u32, invT: f32, zMax: f32, cut: u32, goalCount: u32, topP: f32) -> Narrow {
  var s = Narrow(0u, 0xffffffffu, 24u, 0u, 0u, 0u, vec2<u32>(0u, 0u), vec2<u32>(0u, 0u));
  let withMass = topP >= 0.0;
  loop {
    let lo = max(s.lo, cut);
    for (var i = lid; i < p.vocab; i += WG) {
      let z = logits[base + i] * invT;
      let k = key_of(z);
      if (k >= lo && k <= s.hi) {
        let d = (k >> s.shift) & (BINS - 1u);
        atomicAdd(&histCount[d], 1u);
        if (withMass) { add_mass(d, weight(z, zMax)); }
      }
    }
    workgroupBarrier();
    if (lid == 0u) { narrowShared = narrow_scan(s, goalCount, topP); }
    s = workgroupUniformLoad(&narrowShared);
    if (s.action != 0u) { break; }
  }
  return s;
}

/** Copy the entries with key in [lo, hi] into the candidate slots (in no particular order); their count. */
fn gather(lid: u32, base: u32, invT: f32, zMax: f32, lo: u32, hi: u32) -> u32 {
  for (var i = lid; i < p.vocab; i += WG) {
    let z = logits[base + i] * invT;
    let k = key_of(z);
    if (k >= lo && k <= hi) {
      let slot = atomicAdd(&numCand, 1u);
      if (slot < CAP) {
        candKey[slot] = k;
        candIndex[slot] = i;
        candW[slot] = weight(z, zMax);
      }
    }
  }
  workgroupBarrier();
  if (lid == 0u) { scalarShared = min(atomicLoad(&numCand), CAP); }
  return workgroupUniformLoad(&scalarShared);
}

/**
 * A value lid 0 read after every invocation's update, as a uniform value. The atomic is read by the caller
 * (naga, Deno's WGSL compiler, takes no workgroup pointer as a function argument).
 */
fn uniform_from_lid0(lid: u32, value: u32) -> u32 {
  if (lid == 0u) { scalarShared = value; }
  return workgroupUniformLoad(&scalarShared);
}

/** The largest candidate key t with countAbove + #(candidates >= t) >= goalCount: the k-th largest key. */
fn solve_top_k(lid: u32, m: u32, goalCount: u32) -> u32 {
  for (var c = lid; c < m; c += WG) {
    let kc = candKey[c];
    var n = 0u;
    for (var j = 0u; j < m; j++) { n += select(0u, 1u, candKey[j] >= kc); }
    if (n >= goalCount) { atomicMax(&bestK, kc); }
  }
  workgroupBarrier();
  return uniform_from_lid0(lid, atomicLoad(&bestK));
}

/** The largest candidate key t >= cut with massAbove + mass(candidates >= t) >= need; 0 if none. */
fn solve_top_p(lid: u32, m: u32, cut: u32, need: vec2<u32>, massAbove: vec2<u32>) -> u32 {
  for (var c = lid; c < m; c += WG) {
    let kc = candKey[c];
    if (kc < cut) { continue; }
    var mass = massAbove;
    for (var j = 0u; j < m; j++) {
      if (candKey[j] >= kc) { mass = add64(mass, candW[j]); }
    }
    if (ge64(mass, need)) { atomicMax(&bestP, kc); }
  }
  workgroupBarrier();
  return uniform_from_lid0(lid, atomicLoad(&bestP));
}

/** Mass of the candidates with key >= cut (every invocation computes it; no barrier). */
fn candidate_mass(m: u32, cut: u32) -> vec2<u32> {
  var total = vec2<u32>(0u, 0u);
  for (var j = 0u; j < m; j++) {
    if (candKey[j] >= cut) { total = add64(total, candW[j]); }
  }
  return total;
}

/** The draw when the candidates hold every kept entry (key >= cut): exactly one invocation writes. */
fn draw_candidates(lid: u32, row: u32, m: u32, cut: u32, u: f32) {
  let total = candidate_mass(m, cut);
  // Where u * total rounds to the total or past it, the last kept entry that has weight (a kept entry
  // of weight 0, e.g. a masked token tied at a top-k threshold, is never drawn).
  var lastIndex = 0u;
  for (var j = 0u; j < m; j++) {
    if (candKey[j] >= cut && any(candW[j] != vec2<u32>(0u, 0u))) { lastIndex = max(lastIndex, candIndex[j]); }
  }
  let goal = from_f32(u * to_f32(total));
  let pastEnd = ge64(goal, total);
  for (var c = lid; c < m; c += WG) {
    if (candKey[c] < cut) { continue; }
    let ic = candIndex[c];
    // Running sum of the kept entries before this one in vocabulary order.
    var before = vec2<u32>(0u, 0u);
    for (var j = 0u; j < m; j++) {
      if (candKey[j] >= cut && candIndex[j] < ic) { before = add64(before, candW[j]); }
    }
    let crosses = ge64(goal, before) && !ge64(goal, add64(before, candW[c]));
    if ((!pastEnd && crosses) || (pastEnd && ic == lastIndex)) { out[row] = ic; }
  }
}

/** The draw over the whole row: each invocation owns a contiguous chunk; the crossing chunk is walked. */
fn draw_row(lid: u32, row: u32, base: u32, invT: f32, zMax: f32, cut: u32, u: f32) {
  let chunk = (p.vocab + WG - 1u) / WG;
  let start = min(lid * chunk, p.vocab);
  let stop = min(start + chunk, p.vocab);
  var mine = vec2<u32>(0u, 0u);
  // The chunk holds a kept entry of non-zero weight (only those can be drawn).
  var heavy = false;
  for (var i = start; i < stop; i++) {
    let z = logits[base + i] * invT;
    if (key_of(z) >= cut) {
      let w = weight(z, zMax);
      mine = add64(mine, w);
      heavy = heavy || w.x != 0u || w.y != 0u;
    }
  }
  partial[lid] = mine;
  if (heavy) { atomicMax(&lastChunk, lid + 1u); }
  workgroupBarrier();
  if (lid == 0u) {
    var total = vec2<u32>(0u, 0u);
    for (var t = 0u; t < WG; t++) { total = add64(total, partial[t]); }
    let goal = from_f32(u * to_f32(total));
    var o = Owner(atomicLoad(&lastChunk) - 1u, 1u, vec2<u32>(0u, 0u), goal);
    var prefix = vec2<u32>(0u, 0u);
    for (var t = 0u; t < WG; t++) {
      let next = add64(prefix, partial[t]);
      if (!ge64(goal, next)) {
        o = Owner(t, 0u, prefix, goal);
        break;
      }
      prefix = next;
    }
    ownerShared = o;
  }
  workgroupBarrier();
  let o = ownerShared;
  if (lid == o.lid) {
    var acc = o.before;
    var pick = start;
    for (var i = start; i < stop; i++) {
      let z = logits[base + i] * invT;
      if (key_of(z) < cut) { continue; }
      let w = weight(z, zMax);
      if (w.x != 0u || w.y != 0u) {
        pick = i;
        acc = add64(acc, w);
        if (o.last == 0u && !ge64(o.goal, acc)) { break; }
      }
    }
    out[row] = pick;
  }
}

@compute @workgroup_size(WG)
fn main(
  @builtin(workgroup_id) wid: vec3<u32>,
  @builtin(num_workgroups) nwg: vec3<u32>,
  @builtin(local_invocation_index) lid: u32,
) {
  let row = grid_workgroup(wid, nwg);
  if (row >= p.rows) { return; }
  let base = row * p.vocab;
  // The row's parameters come from a storage buffer; workgroupUniformLoad makes them uniform so the
  // code below (which holds barriers) may branch on them.
  if (lid == 0u) {
    let rp = rowParams[row];
    let greedy = out[row];
    var rs = RowState(rp, 1u, 0.0, 0.0);
    if (rp.temperature > 0.0 && greedy != 0xffffffffu) {
      rs.skip = 0u;
      rs.invT = 1.0 / rp.temperature;
      rs.zMax = logits[base + greedy] * rs.invT;
    }
    rowShared = rs;
  }
  let rs = workgroupUniformLoad(&rowShared);
  if (rs.skip != 0u) { return; }
  let rp = rs.params;
  let invT = rs.invT;
  let zMax = rs.zMax;
  let u = f32(pcg(pcg(rp.seed ^ pcg(rp.step))) >> 8u) / 16777216.0;

  // Keys >= cut survive the warpers so far; numHeld > 0 when the candidate slots hold all of them.
  var cut = 0u;
  var numHeld = 0u;
  if (rp.topK > 0u && rp.topK < p.vocab) {
    let s = narrow(lid, base, invT, zMax, 0u, rp.topK, -1.0);
    if (s.action == 3u) {
      cut = s.lo;
    } else {
      let m = gather(lid, base, invT, zMax, s.lo, select(s.hi, 0xffffffffu, s.action == 1u));
      cut = solve_top_k(lid, m, rp.topK - select(s.countAbove, 0u, s.action == 1u));
      numHeld = select(0u, m, s.action == 1u);
    }
  }
  if (rp.topP < 1.0) {
    if (numHeld > 0u) {
      let total = candidate_mass(numHeld, cut);
      let need = min_need(from_f32(rp.topP * to_f32(total)), total);
      cut = max(cut, solve_top_p(lid, numHeld, cut, need, vec2<u32>(0u, 0u)));
    } else {
      let s = narrow(lid, base, invT, zMax, cut, 0u, rp.topP);
      if (s.action == 3u) {
        cut = max(cut, s.lo);
      } else {
        let lo = max(s.lo, cut);
        let m = gather(lid, base, invT, zMax, lo, select(s.hi, 0xffffffffu, s.action == 1u));
        let massAbove = select(s.massAbove, vec2<u32>(0u, 0u), s.action == 1u);
        cut = max(cut, solve_top_p(lid, m, lo, s.need, massAbove));
        numHeld = select(0u, m, s.action == 1u);
      }
    }
  }
  if (numHeld > 0u) {
    draw_candidates(lid, row, numHeld, cut, u);
  } else {
    draw_row(lid, row, base, invT, zMax, cut, u);
  }
}
