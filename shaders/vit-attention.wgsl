// vit-attention.wgsl: bidirectional multi-head attention for the ViT, head_dim 64, with a key mask.
// Matches HF `SiglipAttention` (eager): softmax(q kᵀ * scale + mask) v, masked keys get no weight.
// Flash-style: one invocation per (image, query token, head) streams every key once with an online
// softmax (running max m, running sum l), 4 keys per step, so no [T, T] score matrix is ever stored and
// no workgroup memory or barrier is needed. head_dim is fixed at 64 (16 vec4 registers for q and for the
// accumulator, unrolled by hand: SwiftShader keeps unrolled vec4s in registers but not indexed arrays).
//
// qkv:  [batch * tokens, 3 * heads * 64] f32, each row = q | k | v (HF q_proj, k_proj, v_proj outputs)
// mask: [batch * tokens] u32, 1 = real patch, 0 = padding (never attended to)
// out:  [batch * tokens, heads * 64] f32
// Consecutive invocations are consecutive queries of one head, so a SIMD group reads the same keys.
// A query whose keys are all masked gets zeros. grid: linear over batch * tokens * heads / WG (x, y split)

override WG: u32 = 64;

struct Params { batch: u32, tokens: u32, heads: u32, scale: f32 }

@group(0) @binding(0) var<storage, read> qkv: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read> mask: array<u32>;
@group(0) @binding(2) var<storage, read_write> out: array<vec4<f32>>;
@group(0) @binding(3) var<uniform> p: Params;

const NEG_BIG: f32 = -3.402823e38;

fn key_valid(keyBase: u32, j: u32) -> bool {
  return j < p.tokens && mask[keyBase + j] != 0u;
}

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let idx = gid.x + gid.y * nwg.x * WG;
  if (idx >= p.batch * p.tokens * p.heads) { return; }
  let t = idx % p.tokens;
  let h = (idx / p.tokens) % p.heads;
  let b = idx / (p.tokens * p.heads);
  let row4 = 3u * p.heads * 16u;
  let kOff = h * 16u + p.heads * 16u;
  let vOff = h * 16u + 2u * p.heads * 16u;
  let keyBase = b * p.tokens;
  let qo = (keyBase + t) * row4 + h * 16u;
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
  var m = NEG_BIG;
  var l = 0.0;
  let last = p.tokens - 1u;
  for (var j = 0u; j < p.tokens; j += 4u) {
    let r0 = (keyBase + j) * row4;
    let r1 = (keyBase + min(j + 1u, last)) * row4;
    let r2 = (keyBase + min(j + 2u, last)) * row4;
    let r3 = (keyBase + min(j + 3u, last)) * row4;
    let valid = vec4<bool>(key_valid(keyBase, j), key_valid(keyBase, j + 1u), key_valid(keyBase, j + 2u), key_valid(keyBase, j + 3u));
    // s = (q·k_j, q·k_j+1, q·k_j+2, q·k_j+3), 4 dims at a time
    var s = vec4<f32>();
    s += q0 * mat4x4<f32>(qkv[r0 + kOff + 0u], qkv[r1 + kOff + 0u], qkv[r2 + kOff + 0u], qkv[r3 + kOff + 0u]);
    s += q1 * mat4x4<f32>(qkv[r0 + kOff + 1u], qkv[r1 + kOff + 1u], qkv[r2 + kOff + 1u], qkv[r3 + kOff + 1u]);
    s += q2 * mat4x4<f32>(qkv[r0 + kOff + 2u], qkv[r1 + kOff + 2u], qkv[r2 + kOff + 2u], qkv[r3 + kOff + 2u]);
    s += q3 * mat4x4<f32>(qkv[r0 + kOff + 3u], qkv[r1 + kOff + 3u], qkv[r2 + kOff + 3u], qkv[r3 + kOff + 3u]);
    s += q4 * mat4x4<f32>(qkv[r0 + kOff + 4u], qkv[r1 + kOff + 4u], qkv[r2 + kOff + 4u], qkv[r3 + kOff + 4u]);
    s += q5 * mat4x4<f32>(qkv[r0 + kOff + 5u], qkv[r1 + kOff + 5u], qkv[r2 + kOff + 5u], qkv[r3 + kOff + 5u]);
    s += q6 * mat4x4<f32>(qkv[r0 + kOff + 6u], qkv[r1 + kOff + 6u], qkv[r2 + kOff + 6u], qkv[r3 + kOff + 6u]);
    s += q7 * mat4x4<f32>(qkv[r0 + kOff + 7u], qkv[r1 + kOff + 7u], qkv[r2 + kOff + 7u], qkv[r3 + kOff + 7u]);
    s += q8 * mat4x4<f32>(qkv[r0 + kOff + 8u], qkv[r1 + kOff + 8u], qkv[r2 + kOff + 8u], qkv[r3 + kOff + 8u]);
    s += q9 * mat4x4<f32>(qkv[r0 + kOff + 9u], qkv[r1 + kOff + 9u], qkv[r2 + kOff + 9u], qkv[r3 + kOff + 9u]);
    s += q10 * mat4x4<f32>(qkv[r0 + kOff + 10u], qkv[r1 + kOff + 10u], qkv[r2 + kOff + 10u], qkv[r3 + kOff + 10u]);
    s += q11 * mat4x4<f32>(qkv[r0 + kOff + 11u], qkv[r1 + kOff + 11u], qkv[r2 + kOff + 11u], qkv[r3 + kOff + 11u]);
    s += q12 * mat4x4<f32>(qkv[r0 + kOff + 12u], qkv[r1 + kOff + 12u], qkv[r2 + kOff + 12u], qkv[r3 + kOff + 12u]);
    s += q13 * mat4x4<f32>(qkv[r0 + kOff + 13u], qkv[r1 + kOff + 13u], qkv[r2 + kOff + 13u], qkv[r3 + kOff + 13u]);
    s += q14 * mat4x4<f32>(qkv[r0 + kOff + 14u], qkv[r1 + kOff + 14u], qkv[r2 + kOff + 14u], qkv[r3 + kOff + 14u]);
    s += q15 * mat4x4<f32>(qkv[r0 + kOff + 15u], qkv[r1 + kOff + 15u], qkv[r2 + kOff + 15u], qkv[r3 + kOff + 15u]);
    s = select(vec4<f32>(NEG_BIG), s, valid);
    let mNew = max(m, max(max(s.x, s.y), max(s.z, s.w)));
    let c = exp(m - mNew);
    let pr = select(vec4<f32>(0.0), exp(s - vec4<f32>(mNew)), valid);
    l = l * c + (pr.x + pr.y) + (pr.z + pr.w);
    // a = a * c + pr.x v_j + pr.y v_j+1 + pr.z v_j+2 + pr.w v_j+3
    a0 = a0 * c + mat4x4<f32>(qkv[r0 + vOff + 0u], qkv[r1 + vOff + 0u], qkv[r2 + vOff + 0u], qkv[r3 + vOff + 0u]) * pr;
    a1 = a1 * c + mat4x4<f32>(qkv[r0 + vOff + 1u], qkv[r1 + vOff + 1u], qkv[r2 + vOff + 1u], qkv[r3 + vOff + 1u]) * pr;
    a2 = a2 * c + mat4x4<f32>(qkv[r0 + vOff + 2u], qkv[r1 + vOff + 2u], qkv[r2 + vOff + 2u], qkv[r3 + vOff + 2u]) * pr;
    a3 = a3 * c + mat4x4<f32>(qkv[r0 + vOff + 3u], qkv[r1 + vOff + 3u], qkv[r2 + vOff + 3u], qkv[r3 + vOff + 3u]) * pr;
    a4 = a4 * c + mat4x4<f32>(qkv[r0 + vOff + 4u], qkv[r1 + vOff + 4u], qkv[r2 + vOff + 4u], qkv[r3 + vOff + 4u]) * pr;
    a5 = a5 * c + mat4x4<f32>(qkv[r0 + vOff + 5u], qkv[r1 + vOff + 5u], qkv[r2 + vOff + 5u], qkv[r3 + vOff + 5u]) * pr;
    a6 = a6 * c + mat4x4<f32>(qkv[r0 + vOff + 6u], qkv[r1 + vOff + 6u], qkv[r2 + vOff + 6u], qkv[r3 + vOff + 6u]) * pr;
    a7 = a7 * c + mat4x4<f32>(qkv[r0 + vOff + 7u], qkv[r1 + vOff + 7u], qkv[r2 + vOff + 7u], qkv[r3 + vOff + 7u]) * pr;
    a8 = a8 * c + mat4x4<f32>(qkv[r0 + vOff + 8u], qkv[r1 + vOff + 8u], qkv[r2 + vOff + 8u], qkv[r3 + vOff + 8u]) * pr;
    a9 = a9 * c + mat4x4<f32>(qkv[r0 + vOff + 9u], qkv[r1 + vOff + 9u], qkv[r2 + vOff + 9u], qkv[r3 + vOff + 9u]) * pr;
    a10 = a10 * c + mat4x4<f32>(qkv[r0 + vOff + 10u], qkv[r1 + vOff + 10u], qkv[r2 + vOff + 10u], qkv[r3 + vOff + 10u]) * pr;
    a11 = a11 * c + mat4x4<f32>(qkv[r0 + vOff + 11u], qkv[r1 + vOff + 11u], qkv[r2 + vOff + 11u], qkv[r3 + vOff + 11u]) * pr;
    a12 = a12 * c + mat4x4<f32>(qkv[r0 + vOff + 12u], qkv[r1 + vOff + 12u], qkv[r2 + vOff + 12u], qkv[r3 + vOff + 12u]) * pr;
    a13 = a13 * c + mat4x4<f32>(qkv[r0 + vOff + 13u], qkv[r1 + vOff + 13u], qkv[r2 + vOff + 13u], qkv[r3 + vOff + 13u]) * pr;
    a14 = a14 * c + mat4x4<f32>(qkv[r0 + vOff + 14u], qkv[r1 + vOff + 14u], qkv[r2 + vOff + 14u], qkv[r3 + vOff + 14u]) * pr;
    a15 = a15 * c + mat4x4<f32>(qkv[r0 + vOff + 15u], qkv[r1 + vOff + 15u], qkv[r2 + vOff + 15u], qkv[r3 + vOff + 15u]) * pr;
    m = mNew;
  }
  let inv = select(0.0, 1.0 / l, l > 0.0);
  let oo = (keyBase + t) * p.heads * 16u + h * 16u;
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
