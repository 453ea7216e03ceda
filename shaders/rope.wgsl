// rope.wgsl: rotary position embedding, Llama "rotate half" convention, in place.
// Matches HF `apply_rotary_pos_emb`: out = x * cos + rotate_half(x) * sin, where for i < half
//   out[i]        = x[i] * cos[i] - x[i + half] * sin[i]
//   out[i + half] = x[i + half] * cos[i] + x[i] * sin[i]
// cos/sin come from a table built on the host from rope_theta (see rope.ts), one row per position, so
// the kernel needs no transcendental functions and matches HF's f32 angles exactly.
//
// Only the first `rotaryHeads` heads of each token are rotated, so the fused q | k | v rows of a decoder
// layer can be passed whole: q and k heads turn, v heads are left alone.
// M-RoPE (Qwen-VL): positions has three rows (t, h, w) and frequency i turns by the row its axis names
// (lib/mrope-axis.wgsl, prepended by the host); mode 0 is plain RoPE: one row.
// x: [numTokens, numHeads, headDim] f32 (read and written)   positions: [numTokens] u32 (mode 0) or
// [3, numTokens] u32
// cosSin: [maxPositions, headDim] f32, row p = cos(p * invFreq[0..half)) | sin(p * invFreq[0..half))
// errors: [2] u32 atomics: [0] += 1 per token with a position >= maxPositions (the frequencies of that
//         row are left unrotated), [1] = max bad position. grid: linear over numTokens * rotaryHeads * half / WG (x, y split)

override WG: u32 = 64;

struct Params { numTokens: u32, numHeads: u32, headDim: u32, maxPositions: u32, rotaryHeads: u32, mode: u32, a: u32, b: u32 }

@group(0) @binding(0) var<storage, read_write> x: array<f32>;
@group(0) @binding(1) var<storage, read> positions: array<u32>;
@group(0) @binding(2) var<storage, read> cosSin: array<f32>;
@group(0) @binding(3) var<storage, read_write> errors: array<atomic<u32>, 2>;
@group(0) @binding(4) var<uniform> p: Params;

fn largest_position(token: u32) -> u32 {
  if (p.mode == 0u) { return positions[token]; }
  return max(positions[token], max(positions[p.numTokens + token], positions[2u * p.numTokens + token]));
}

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let half = p.headDim / 2u;
  let idx = grid_invocation(gid, nwg, WG);
  if (idx >= p.numTokens * p.rotaryHeads * half) { return; }
  let i = idx % half;
  let head = (idx / half) % p.rotaryHeads;
  let token = idx / (half * p.rotaryHeads);
  if (head == 0u && i == 0u) {
    let worst = largest_position(token);
    if (worst >= p.maxPositions) {
      atomicAdd(&errors[0], 1u);
      atomicMax(&errors[1], worst);
    }
  }
  let pos = positions[mrope_axis(i, p.mode, p.a, p.b) * p.numTokens + token];
  if (pos >= p.maxPositions) { return; }
  let c = cosSin[pos * p.headDim + i];
  let s = cosSin[pos * p.headDim + half + i];
  let base = (token * p.numHeads + head) * p.headDim;
  let a = x[base + i];
  let b = x[base + half + i];
  x[base + i] = a * c - b * s;
  x[base + half + i] = b * c + a * s;
}
