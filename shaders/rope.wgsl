// rope.wgsl: rotary position embedding, Llama "rotate half" convention, in place.
// Matches HF `apply_rotary_pos_emb`: out = x * cos + rotate_half(x) * sin, where for i < half
//   out[i]        = x[i] * cos[i] - x[i + half] * sin[i]
//   out[i + half] = x[i + half] * cos[i] + x[i] * sin[i]
// cos/sin come from a table built on the host from rope_theta (see rope.ts), one row per position, so
// the kernel needs no transcendental functions and matches HF's f32 angles exactly.
//
// Only the first `rotaryHeads` heads of each token are rotated, so the fused q | k | v rows of a decoder
// layer can be passed whole: q and k heads turn, v heads are left alone.
// x: [numTokens, numHeads, headDim] f32 (read and written)   positions: [numTokens] u32
// cosSin: [maxPositions, headDim] f32, row p = cos(p * invFreq[0..half)) | sin(p * invFreq[0..half))
// errors: [2] u32 atomics: [0] += 1 per token whose position >= maxPositions (left unrotated),
//         [1] = max bad position. grid: linear over numTokens * rotaryHeads * half / WG (x, y split)

override WG: u32 = 64;

struct Params { numTokens: u32, numHeads: u32, headDim: u32, maxPositions: u32, rotaryHeads: u32, _pad0: u32, _pad1: u32, _pad2: u32 }

@group(0) @binding(0) var<storage, read_write> x: array<f32>;
@group(0) @binding(1) var<storage, read> positions: array<u32>;
@group(0) @binding(2) var<storage, read> cosSin: array<f32>;
@group(0) @binding(3) var<storage, read_write> errors: array<atomic<u32>, 2>;
@group(0) @binding(4) var<uniform> p: Params;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let half = p.headDim / 2u;
  let idx = grid_invocation(gid, nwg, WG);
  if (idx >= p.numTokens * p.rotaryHeads * half) { return; }
  let i = idx % half;
  let head = (idx / half) % p.rotaryHeads;
  let token = idx / (half * p.rotaryHeads);
  let pos = positions[token];
  if (pos >= p.maxPositions) {
    if (head == 0u && i == 0u) {
      atomicAdd(&errors[0], 1u);
      atomicMax(&errors[1], pos);
    }
    return;
  }
  let c = cosSin[pos * p.headDim + i];
  let s = cosSin[pos * p.headDim + half + i];
  let base = (token * p.numHeads + head) * p.headDim;
  let a = x[base + i];
  let b = x[base + half + i];
  x[base + i] = a * c - b * s;
  x[base + half + i] = b * c + a * s;
}
