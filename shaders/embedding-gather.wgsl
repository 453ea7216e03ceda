// embedding-gather.wgsl: out[t, :] = table[ids[t], :]. One invocation per output element.
// An id >= total writes a zero row and is reported through `errors` (never read out of bounds).
// The table may be one part of a table split by rows (weights larger than one binding): it holds rows
// [first, first + vocab) of `total`, and writes only the tokens whose ids fall there; the last part
// (first + vocab == total) also writes the zero rows of bad ids. An unsplit table has first 0, vocab total.
// ids: [numTokens] u32   table: [vocab, dim] in any storage format, read through the lib/weights-*.wgsl
// prepended by src/kernels/embedding-gather.ts (w_row, w_load1: a quantized row is dequantized in
// registers; f32 tables, including activations, use lib/weights-f32-scalar.wgsl)
// out: [numTokens, dim] f32   errors: [2] u32 atomics: [0] += 1 per bad id, [1] = max bad id
// grid: linear over numTokens * dim / WG (x, y split)

override WG: u32 = 64;

struct Params { numTokens: u32, vocab: u32, dim: u32, first: u32, total: u32 }

@group(0) @binding(0) var<storage, read> ids: array<u32>;
// @binding(1) w_data and @binding(2) w_scales: declared by the lib/weights-*.wgsl in front of this file
@group(0) @binding(3) var<storage, read_write> out: array<f32>;
@group(0) @binding(4) var<storage, read_write> errors: array<atomic<u32>, 2>;
@group(0) @binding(5) var<uniform> p: Params;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let idx = grid_invocation(gid, nwg, WG);
  if (idx >= p.numTokens * p.dim) { return; }
  let t = idx / p.dim;
  let c = idx % p.dim;
  let id = ids[t];
  if (id >= p.total) {
    if (p.first + p.vocab < p.total) { return; } // not the last part
    out[idx] = 0.0;
    if (c == 0u) {
      atomicAdd(&errors[0], 1u);
      atomicMax(&errors[1], id);
    }
    return;
  }
  if (id < p.first || id - p.first >= p.vocab) { return; } // another part's row
  out[idx] = w_load1(w_row(id - p.first, p.dim), c);
}
