// splice.wgsl: scatter media embeddings into the rows of the token-embedding buffer that hold their
// placeholder tokens: dst[rows[i], :] = src[srcRowOffset + i, :]. Run after the embedding gather of the
// same step; a prefill chunk that holds part of an image's placeholders takes its slice of the rows.
// With ADD, dst[rows[i], :] += src[...] instead (Qwen3-VL's DeepStack: vision rows added to the hidden
// state after an early decoder layer).
// A row index >= numDstRows is skipped and reported through `errors` ([0] += 1, [1] = max bad row).
// src: [>= srcRowOffset + numRows, dim] f32   rows: [numRows] u32   dst: [numDstRows, dim] f32
// grid: linear over numRows * dim / WG (x, y split)

override WG: u32 = 64;
override ADD: bool = false;

struct Params { numRows: u32, dim: u32, numDstRows: u32, srcRowOffset: u32 }

@group(0) @binding(0) var<storage, read> src: array<f32>;
@group(0) @binding(1) var<storage, read> rows: array<u32>;
@group(0) @binding(2) var<storage, read_write> dst: array<f32>;
@group(0) @binding(3) var<storage, read_write> errors: array<atomic<u32>, 2>;
@group(0) @binding(4) var<uniform> p: Params;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let idx = grid_invocation(gid, nwg, WG);
  if (idx >= p.numRows * p.dim) { return; }
  let i = idx / p.dim;
  let c = idx % p.dim;
  let row = rows[i];
  if (row >= p.numDstRows) {
    if (c == 0u) {
      atomicAdd(&errors[0], 1u);
      atomicMax(&errors[1], row);
    }
    return;
  }
  let v = src[(p.srcRowOffset + i) * p.dim + c];
  if (ADD) {
    dst[row * p.dim + c] += v;
  } else {
    dst[row * p.dim + c] = v;
  }
}
