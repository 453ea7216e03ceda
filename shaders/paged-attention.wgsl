// paged-attention.wgsl: causal attention of new tokens over a paged KV cache, for prefill chunks and
// decode steps alike (a decode step is a chunk of one token per sequence). Matches HF `LlamaAttention`
// (eager, GQA by repeat_kv): query token t at absolute position pos attends keys 0..pos of its sequence,
// whose K/V rows sit in fixed-size blocks listed by its block table (vLLM PagedAttention layout):
//
//   key k of sequence s  ->  slot = blockTables[s, k / blockSize] * blockSize + k % blockSize
//
// One invocation per (token, query head) streams the keys with an online softmax, 4 at a time; kv head =
// query head / (numHeads / numKvHeads). head_dim is fixed at 64 (16 vec4 registers for q and for the
// accumulator, unrolled by hand for SwiftShader). The keys of this step must already be in the cache
// (kv-write runs first in the same pass).
//
// qkv: [numTokens, rowStride] f32, q heads at the start of each row   tokenSeq, tokenPos: [numTokens] u32
// blockTables: [numSeqs, maxBlocksPerSeq] u32   kCache, vCache: [numSlots, numKvHeads, 64] f32
// out: [numTokens, numHeads * 64] f32   grid: linear over numTokens * numHeads / WG (x, y split)

override WG: u32 = 64;

struct Params {
  numTokens: u32,
  numHeads: u32,
  numKvHeads: u32,
  rowStride: u32,
  maxBlocksPerSeq: u32,
  blockSize: u32,
  scale: f32,
  _pad: u32,
}

@group(0) @binding(0) var<storage, read> qkv: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read> tokenSeq: array<u32>;
@group(0) @binding(2) var<storage, read> tokenPos: array<u32>;
@group(0) @binding(3) var<storage, read> blockTables: array<u32>;
@group(0) @binding(4) var<storage, read> kCache: array<vec4<f32>>;
@group(0) @binding(5) var<storage, read> vCache: array<vec4<f32>>;
@group(0) @binding(6) var<storage, read_write> out: array<vec4<f32>>;
@group(0) @binding(7) var<uniform> p: Params;

/** First vec4 of key/value k (of kv head kvh) of the sequence whose block table starts at `table`. */
fn kv_base(table: u32, k: u32, kvh: u32) -> u32 {
  let slot = blockTables[table + k / p.blockSize] * p.blockSize + k % p.blockSize;
  return (slot * p.numKvHeads + kvh) * 16u;
}

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let idx = gid.x + gid.y * nwg.x * WG;
  if (idx >= p.numTokens * p.numHeads) { return; }
  let h = idx % p.numHeads;
  let t = idx / p.numHeads;
  let kvh = h / (p.numHeads / p.numKvHeads);
  let table = tokenSeq[t] * p.maxBlocksPerSeq;
  let ctx = tokenPos[t] + 1u;
  let qo = (t * p.rowStride) / 4u + h * 16u;
  let q0 = qkv[qo + 0u] * p.scale;
  let q1 = qkv[qo + 1u] * p.scale;
  let q2 = qkv[qo + 2u] * p.scale;
  let q3 = qkv[qo + 3u] * p.scale;
  let q4 = qkv[qo + 4u] * p.scale;
  let q5 = qkv[qo + 5u] * p.scale;
  let q6 = qkv[qo + 6u] * p.scale;
  let q7 = qkv[qo + 7u] * p.scale;
  let q8 = qkv[qo + 8u] * p.scale;
  let q9 = qkv[qo + 9u] * p.scale;
  let q10 = qkv[qo + 10u] * p.scale;
  let q11 = qkv[qo + 11u] * p.scale;
  let q12 = qkv[qo + 12u] * p.scale;
  let q13 = qkv[qo + 13u] * p.scale;
  let q14 = qkv[qo + 14u] * p.scale;
  let q15 = qkv[qo + 15u] * p.scale;
  var a0 = vec4<f32>();
  var a1 = vec4<f32>();
  var a2 = vec4<f32>();
  var a3 = vec4<f32>();
  var a4 = vec4<f32>();
  var a5 = vec4<f32>();
  var a6 = vec4<f32>();
  var a7 = vec4<f32>();
  var a8 = vec4<f32>();
  var a9 = vec4<f32>();
  var a10 = vec4<f32>();
  var a11 = vec4<f32>();
  var a12 = vec4<f32>();
  var a13 = vec4<f32>();
  var a14 = vec4<f32>();
  var a15 = vec4<f32>();
  var m = -3.402823e38;
  var l = 0.0;
  let last = ctx - 1u;
  for (var j = 0u; j < ctx; j += 4u) {
    let b0 = kv_base(table, j, kvh);
    let b1 = kv_base(table, min(j + 1u, last), kvh);
    let b2 = kv_base(table, min(j + 2u, last), kvh);
    let b3 = kv_base(table, min(j + 3u, last), kvh);
    let valid = vec4<bool>(true, j + 1u < ctx, j + 2u < ctx, j + 3u < ctx);
    var s = vec4<f32>();
    s += q0 * mat4x4<f32>(kCache[b0 + 0u], kCache[b1 + 0u], kCache[b2 + 0u], kCache[b3 + 0u]);
    s += q1 * mat4x4<f32>(kCache[b0 + 1u], kCache[b1 + 1u], kCache[b2 + 1u], kCache[b3 + 1u]);
    s += q2 * mat4x4<f32>(kCache[b0 + 2u], kCache[b1 + 2u], kCache[b2 + 2u], kCache[b3 + 2u]);
    s += q3 * mat4x4<f32>(kCache[b0 + 3u], kCache[b1 + 3u], kCache[b2 + 3u], kCache[b3 + 3u]);
    s += q4 * mat4x4<f32>(kCache[b0 + 4u], kCache[b1 + 4u], kCache[b2 + 4u], kCache[b3 + 4u]);
    s += q5 * mat4x4<f32>(kCache[b0 + 5u], kCache[b1 + 5u], kCache[b2 + 5u], kCache[b3 + 5u]);
    s += q6 * mat4x4<f32>(kCache[b0 + 6u], kCache[b1 + 6u], kCache[b2 + 6u], kCache[b3 + 6u]);
    s += q7 * mat4x4<f32>(kCache[b0 + 7u], kCache[b1 + 7u], kCache[b2 + 7u], kCache[b3 + 7u]);
    s += q8 * mat4x4<f32>(kCache[b0 + 8u], kCache[b1 + 8u], kCache[b2 + 8u], kCache[b3 + 8u]);
    s += q9 * mat4x4<f32>(kCache[b0 + 9u], kCache[b1 + 9u], kCache[b2 + 9u], kCache[b3 + 9u]);
    s += q10 * mat4x4<f32>(kCache[b0 + 10u], kCache[b1 + 10u], kCache[b2 + 10u], kCache[b3 + 10u]);
    s += q11 * mat4x4<f32>(kCache[b0 + 11u], kCache[b1 + 11u], kCache[b2 + 11u], kCache[b3 + 11u]);
    s += q12 * mat4x4<f32>(kCache[b0 + 12u], kCache[b1 + 12u], kCache[b2 + 12u], kCache[b3 + 12u]);
    s += q13 * mat4x4<f32>(kCache[b0 + 13u], kCache[b1 + 13u], kCache[b2 + 13u], kCache[b3 + 13u]);
    s += q14 * mat4x4<f32>(kCache[b0 + 14u], kCache[b1 + 14u], kCache[b2 + 14u], kCache[b3 + 14u]);
    s += q15 * mat4x4<f32>(kCache[b0 + 15u], kCache[b1 + 15u], kCache[b2 + 15u], kCache[b3 + 15u]);
    s = select(vec4<f32>(-3.402823e38), s, valid);
    let mNew = max(m, max(max(s.x, s.y), max(s.z, s.w)));
    let c = exp(m - mNew);
    let pr = select(vec4<f32>(0.0), exp(s - vec4<f32>(mNew)), valid);
    l = l * c + (pr.x + pr.y) + (pr.z + pr.w);
    a0 = a0 * c + mat4x4<f32>(vCache[b0 + 0u], vCache[b1 + 0u], vCache[b2 + 0u], vCache[b3 + 0u]) * pr;
    a1 = a1 * c + mat4x4<f32>(vCache[b0 + 1u], vCache[b1 + 1u], vCache[b2 + 1u], vCache[b3 + 1u]) * pr;
    a2 = a2 * c + mat4x4<f32>(vCache[b0 + 2u], vCache[b1 + 2u], vCache[b2 + 2u], vCache[b3 + 2u]) * pr;
    a3 = a3 * c + mat4x4<f32>(vCache[b0 + 3u], vCache[b1 + 3u], vCache[b2 + 3u], vCache[b3 + 3u]) * pr;
    a4 = a4 * c + mat4x4<f32>(vCache[b0 + 4u], vCache[b1 + 4u], vCache[b2 + 4u], vCache[b3 + 4u]) * pr;
    a5 = a5 * c + mat4x4<f32>(vCache[b0 + 5u], vCache[b1 + 5u], vCache[b2 + 5u], vCache[b3 + 5u]) * pr;
    a6 = a6 * c + mat4x4<f32>(vCache[b0 + 6u], vCache[b1 + 6u], vCache[b2 + 6u], vCache[b3 + 6u]) * pr;
    a7 = a7 * c + mat4x4<f32>(vCache[b0 + 7u], vCache[b1 + 7u], vCache[b2 + 7u], vCache[b3 + 7u]) * pr;
    a8 = a8 * c + mat4x4<f32>(vCache[b0 + 8u], vCache[b1 + 8u], vCache[b2 + 8u], vCache[b3 + 8u]) * pr;
    a9 = a9 * c + mat4x4<f32>(vCache[b0 + 9u], vCache[b1 + 9u], vCache[b2 + 9u], vCache[b3 + 9u]) * pr;
    a10 = a10 * c + mat4x4<f32>(vCache[b0 + 10u], vCache[b1 + 10u], vCache[b2 + 10u], vCache[b3 + 10u]) * pr;
    a11 = a11 * c + mat4x4<f32>(vCache[b0 + 11u], vCache[b1 + 11u], vCache[b2 + 11u], vCache[b3 + 11u]) * pr;
    a12 = a12 * c + mat4x4<f32>(vCache[b0 + 12u], vCache[b1 + 12u], vCache[b2 + 12u], vCache[b3 + 12u]) * pr;
    a13 = a13 * c + mat4x4<f32>(vCache[b0 + 13u], vCache[b1 + 13u], vCache[b2 + 13u], vCache[b3 + 13u]) * pr;
    a14 = a14 * c + mat4x4<f32>(vCache[b0 + 14u], vCache[b1 + 14u], vCache[b2 + 14u], vCache[b3 + 14u]) * pr;
    a15 = a15 * c + mat4x4<f32>(vCache[b0 + 15u], vCache[b1 + 15u], vCache[b2 + 15u], vCache[b3 + 15u]) * pr;
    m = mNew;
  }
  let inv = 1.0 / l;
  let oo = idx * 16u;
  out[oo + 0u] = a0 * inv;
  out[oo + 1u] = a1 * inv;
  out[oo + 2u] = a2 * inv;
  out[oo + 3u] = a3 * inv;
  out[oo + 4u] = a4 * inv;
  out[oo + 5u] = a5 * inv;
  out[oo + 6u] = a6 * inv;
  out[oo + 7u] = a7 * inv;
  out[oo + 8u] = a8 * inv;
  out[oo + 9u] = a9 * inv;
  out[oo + 10u] = a10 * inv;
  out[oo + 11u] = a11 * inv;
  out[oo + 12u] = a12 * inv;
  out[oo + 13u] = a13 * inv;
  out[oo + 14u] = a14 * inv;
  out[oo + 15u] = a15 * inv;
}
