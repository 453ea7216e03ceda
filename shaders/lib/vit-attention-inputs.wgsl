// lib/vit-attention-inputs.wgsl: the inputs of the ViT attention kernels that run in one dispatch
// (vit-attention.wgsl, vit-attention-tiled.wgsl; src/kernels/vit-attention.ts packs Params).
//   qkv:  [batch * tokens, 3 * heads * D] f32 as vec4, each row = q | k | v
//   mask: [batch * tokens] u32, 1 = real patch, 0 = padding (never attended to)
//   out:  [batch * tokens, heads * D] f32 as vec4

override WG: u32 = 64;

struct Params { batch: u32, tokens: u32, heads: u32, scale: f32 }

@group(0) @binding(0) var<storage, read> qkv: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read> mask: array<u32>;
@group(0) @binding(2) var<storage, read_write> out: array<vec4<f32>>;
@group(0) @binding(3) var<uniform> p: Params;
