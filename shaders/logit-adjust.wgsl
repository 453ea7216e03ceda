// logit-adjust.wgsl: the logit processors that run before argmax and the sampler, per row, in place:
//   penalties: logits[id] -= amount for each (id, amount) of the row (OpenAI's frequency and presence
//     penalties: amount = count(id in the output so far) * frequency + presence; ids unique per row)
//   mask: a token whose bit is clear in the row's bitmask (bit j of word i is token 32 i + j; set =
//     allowed) becomes MASKED, the lowest finite f32: argmax never picks it while one token is allowed,
//     it is not flagged as non-finite, and its weight exp(z - zMax) in the sampler is 0.
// A penalty on a masked token is skipped (the mask writes it), so no two invocations write one logit.
// One workgroup per row; a row with no mask and no penalties returns at once.
// logits: [rows, vocab] f32   rowAdjust: [rows] RowAdjust   masks: [maskRows, words] u32
// penalties: [entries] (id u32, amount f32 bits)   grid: linear over rows (x, y split)

override WG: u32 = 64;

const NONE: u32 = 0xffffffffu;
const MASKED: f32 = -0x1.fffffep+127f;

struct Params {
  rows: u32,
  vocab: u32,
  words: u32,
  _pad0: u32,
}

struct RowAdjust {
  // Row of `masks` holding this row's bitmask, or NONE.
  maskRow: u32,
  penaltyStart: u32,
  penaltyCount: u32,
  _pad0: u32,
}

@group(0) @binding(0) var<storage, read_write> logits: array<f32>;
@group(0) @binding(1) var<storage, read> rowAdjust: array<RowAdjust>;
@group(0) @binding(2) var<storage, read> masks: array<u32>;
@group(0) @binding(3) var<storage, read> penalties: array<vec2<u32>>;
@group(0) @binding(4) var<uniform> p: Params;

fn allowed(a: RowAdjust, id: u32) -> bool {
  if (a.maskRow == NONE) { return true; }
  return ((masks[a.maskRow * p.words + (id >> 5u)] >> (id & 31u)) & 1u) != 0u;
}

@compute @workgroup_size(WG)
fn main(
  @builtin(workgroup_id) wid: vec3<u32>,
  @builtin(num_workgroups) nwg: vec3<u32>,
  @builtin(local_invocation_index) lid: u32,
) {
  let row = grid_workgroup(wid, nwg);
  if (row >= p.rows) { return; }
  let a = rowAdjust[row];
  let base = row * p.vocab;
  for (var e = lid; e < a.penaltyCount; e += WG) {
    let entry = penalties[a.penaltyStart + e];
    if (entry.x < p.vocab && allowed(a, entry.x)) {
      logits[base + entry.x] -= bitcast<f32>(entry.y);
    }
  }
  if (a.maskRow == NONE) { return; }
  for (var w = lid; w < p.words; w += WG) {
    let bits = masks[a.maskRow * p.words + w];
    if (bits == NONE) { continue; }
    let first = w * 32u;
    let n = min(32u, p.vocab - first);
    for (var j = 0u; j < n; j++) {
      if (((bits >> j) & 1u) == 0u) { logits[base + first + j] = MASKED; }
    }
  }
}
