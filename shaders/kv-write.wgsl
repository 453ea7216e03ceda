// kv-write.wgsl: copy the new tokens' keys and values into the paged KV cache (vLLM reshape_and_cache).
//   kCache[slot[t], h, :] = qkv[t, kOffset + h * headDim ..]   vCache[slot[t], h, :] = qkv[t, vOffset + ..]
// slot = block * blockSize + offset in block (see src/kv/). A slot >= numSlots is skipped and reported
// through `errors` ([0] += 1 per bad token, [1] = max bad slot) instead of writing out of bounds.
// qkv: [numTokens, rowStride] f32 (fused q | k | v rows)   slots: [numTokens] u32
// kCache, vCache: [numSlots, numKvHeads, headDim] f32   grid: linear over numTokens * numKvHeads * headDim / WG

override WG: u32 = 64;

struct Params {
  numTokens: u32,
  numKvHeads: u32,
  headDim: u32,
  rowStride: u32,
  kOffset: u32,
  vOffset: u32,
  numSlots: u32,
  _pad: u32,
}

@group(0) @binding(0) var<storage, read> qkv: array<f32>;
@group(0) @binding(1) var<storage, read> slots: array<u32>;
@group(0) @binding(2) var<storage, read_write> kCache: array<f32>;
@group(0) @binding(3) var<storage, read_write> vCache: array<f32>;
@group(0) @binding(4) var<storage, read_write> errors: array<atomic<u32>, 2>;
@group(0) @binding(5) var<uniform> p: Params;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let rowElems = p.numKvHeads * p.headDim;
  let idx = grid_invocation(gid, nwg, WG);
  if (idx >= p.numTokens * rowElems) { return; }
  let t = idx / rowElems;
  let e = idx % rowElems;
  let slot = slots[t];
  if (slot >= p.numSlots) {
    if (e == 0u) {
      atomicAdd(&errors[0], 1u);
      atomicMax(&errors[1], slot);
    }
    return;
  }
  kCache[slot * rowElems + e] = qkv[t * p.rowStride + p.kOffset + e];
  vCache[slot * rowElems + e] = qkv[t * p.rowStride + p.vOffset + e];
}
