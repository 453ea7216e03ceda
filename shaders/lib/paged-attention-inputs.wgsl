// lib/paged-attention-inputs.wgsl: what every paged-attention plan reads (paged-attention.wgsl,
// paged-attention-split.wgsl, paged-attention-split-workgroup.wgsl): the shape, the rows' q/k/v, their
// sequences and positions, the block tables and the KV cache. Binding 6 is each kernel's own output
// (`out` for the stream plan, `partial` for the split plans). Packed by src/kernels/paged-attention.ts.
//   qkv: [numTokens, rowStride] f32, q heads first   tokenSeq, tokenPos: [numTokens] u32
//   blockTables: [numSeqs, maxBlocksPerSeq] u32      kCache, vCache: [numSlots, numKvHeads, D] f32

struct Params {
  numTokens: u32,
  numHeads: u32,
  numKvHeads: u32,
  rowStride: u32,
  maxBlocksPerSeq: u32,
  blockSize: u32,
  scale: f32,
  // Split plans: the groups of query heads per kv head (one invocation or workgroup each); stream: 0.
  groupsPerKvHead: u32,
}

@group(0) @binding(0) var<storage, read> qkv: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read> tokenSeq: array<u32>;
@group(0) @binding(2) var<storage, read> tokenPos: array<u32>;
@group(0) @binding(3) var<storage, read> blockTables: array<u32>;
@group(0) @binding(4) var<storage, read> kCache: array<vec4<f32>>;
@group(0) @binding(5) var<storage, read> vCache: array<vec4<f32>>;
@group(0) @binding(7) var<uniform> p: Params;
