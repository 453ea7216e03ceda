// matmul-register.wgsl: y = act(x · Wᵀ + b), register-tiled, no workgroup memory, no barriers.
// For CPU-emulated adapters (SwiftShader), where each invocation is a SIMD lane and barriers are costly:
// every invocation keeps its whole output tile in registers and streams x and W straight from memory.
// Loops over tile rows/columns are unrolled by hand because SwiftShader does not unroll them and
// indexing a function-scope array with a loop counter is ~8x slower there (measured).
//
// x: [M, K] f32 as vec4 along K    W: [N, K] (HF Linear layout [out, in]) in any storage format: the
// kernel reads it through the lib/weights-*.wgsl prepended by src/kernels/matmul.ts (w_row, w_load4),
// which dequantizes in registers (f16, q8, q4) or reads f32 as it is.
// b: [N] f32 (read only when the epilogue adds a bias)    y: [M, N] f32
// Needs K % 4 == 0 (the host falls back to matmul.wgsl otherwise). M and N are arbitrary: loads clamp
// to the last row/column, stores are guarded.
//
// Entry points (the host picks by M):
//   main        one invocation = 16 rows x 16 columns (4 column quads). For prefill / ViT shapes.
//   main_narrow one invocation = 1 row x 4 * NARROW_QUADS columns (2 or 4 column quads, per weight
//               format: more columns share each load of x, which pays where unpacking is cheap to
//               amortise, q4). For decode (M small).
//   main_narrow_rows  one invocation = NARROW_ROWS rows (2 or 4) x 8 columns: each group of W is loaded
//               and unpacked once (w_group) and multiplied by every row (w_group_dot), or each vec4 quad
//               (w_quad, w_quad_mul), so a batched decode step (several sequences, one row each) reads its
//               weights once per row block, not once per row. A row's result is bit-identical to
//               main_narrow's (same dot products, same order).
// The decode entries take W by whole quantization groups or a vec4 at a time, as the format's lib says
// (W_NARROW_GROUPS): groups pay where unpacking is shared (q4, q8); for f32 the per-vec4 loop is ~25%
// faster on SwiftShader (a 1-row decode step's 121 matmuls of the SmolVLM-256M shape: 324 against 437 ms
// median in Node; the group loop's extra work per group is not repaid when nothing needs unpacking).
// In both, consecutive invocations walk the column blocks of one row block, so the lanes of a SIMD group
// read the same x rows.
//
// A column quad's 4 weight rows form a mat4x4 whose columns are those rows, so
// xv * mat4x4(w0, w1, w2, w3) = (dot(xv, w0), dot(xv, w1), dot(xv, w2), dot(xv, w3)).

override WG: u32 = 64;
// Column quads per main_narrow invocation: 2 or 4 (the branches on it are folded when the pipeline is built).
override NARROW_QUADS: u32 = 2u;
// Rows per main_narrow_rows invocation: 2 or 4 (likewise folded).
override NARROW_ROWS: u32 = 4u;
// The epilogue (below), or EPILOGUE_FROM_PARAMS to read it from the uniform.
const EPILOGUE_FROM_PARAMS: u32 = 0xffffffffu;
override EPILOGUE: u32 = EPILOGUE_FROM_PARAMS;

// Outputs per invocation of main (the host sizes the grid from these; the unrolled code below matches them).
const WIDE_ROWS: u32 = 16u;
const WIDE_COLS: u32 = 16u;

// epilogue: the bits of lib/activation.wgsl: add bias, the activation (0 none, 1 GELU tanh, 2 SiLU), add
// y's previous value (a residual connection: y += act(x · Wᵀ + b)). Two ways to give it, per pipeline:
//   EPILOGUE = EPILOGUE_FROM_PARAMS (narrow entries): read from the uniform p.epilogue, so one pipeline
//     serves every layer (the unrolled kernels take seconds each to compile on SwiftShader, and a decode
//     invocation stores 8 or 16 values against a K loop of hundreds).
//   EPILOGUE = the epilogue itself (main): the compiler drops the code of the other epilogues from the
//     64 stores. On SwiftShader the generic stores cost QKᵀ (K = 64) 37% of its time although they took
//     no branch (776 -> 487 ms for 12 x 1024 x 1024 x 64, and ~5% at the ViT weight shapes), so each
//     epilogue the model uses gets its own wide pipeline.
// main stores its 16 rows in a loop (4 stores a row) from an array of the 64 accumulators: SwiftShader
// inlines every store4 call, and 64 inlined stores took most of the pipeline's compile time (bf16 W, bias
// epilogue: 1.6 s unrolled against 0.37 s in the loop, Dawn in Node). At run time the loop measured within
// noise of the unrolled stores at the ViT weight shapes and ~6% slower for short K (4096 x 1024 x 64).
// The layout fields place matrix z = gid.z of a batch inside the bindings, so the same kernel runs the
// attention's per-head products (src/kernels/batched-matmul.ts) on strided views of one buffer:
//   x row r of matrix z     starts at vec4 x_off + z * x_batch + r * x_stride
//   W row n of matrix z     w_row(n, w_stride) (w_stride in elements), its data index moved by w_off + z * w_batch
//   y[r, c] of matrix z     is f32 y_off + z * y_batch + r * y_stride + c
// A weight matmul (one matrix, dense rows) has offsets and batch steps 0, x_stride K / 4, w_stride K,
// y_stride N; only f32 W is ever offset (the data index is in the format's own units).
struct Params {
  M: u32, N: u32, K: u32, epilogue: u32,
  x_off: u32, x_stride: u32, x_batch: u32,
  w_off: u32, w_stride: u32, w_batch: u32,
  y_off: u32, y_stride: u32, y_batch: u32,
}

@group(0) @binding(0) var<storage, read> x: array<vec4<f32>>;
// @binding(1) w_data and @binding(2) w_scales: declared by the lib/weights-*.wgsl in front of this file
@group(0) @binding(3) var<storage, read> b: array<f32>;
// @binding(4) y: declared by the lib/store-y-*.wgsl in front of this file
@group(0) @binding(5) var<uniform> p: Params;

// The batch matrix this invocation works on (gid.z), set once at entry.
var<private> zm: u32;

// This pipeline's epilogue (folded to a constant unless it comes from the uniform).
fn epilogue() -> u32 {
  if (EPILOGUE != EPILOGUE_FROM_PARAMS) { return EPILOGUE; }
  return p.epilogue;
}

// store4(r, c, v): row r, columns c..c+3 of y (guarded), with the epilogue. Declared with y itself by
// lib/store-y-f32.wgsl or lib/store-y-vec4.wgsl (vec4 stores where every row of y starts on a vec4:
// about 2x faster for short K on SwiftShader, where the stores are a large part of the work).

// Row of W for column c, clamped to the last row (its results are never stored).
fn wrow(c: u32) -> WRow {
  var r = w_row(min(c, p.N - 1u), p.w_stride);
  r.d += p.w_off + zm * p.w_batch;
  return r;
}

// First vec4 of row r of x.
fn xrow(r: u32) -> u32 {
  return p.x_off + zm * p.x_batch + r * p.x_stride;
}


@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let K4 = p.K / 4u;
  let numColBlocks = (p.N + WIDE_COLS - 1u) / WIDE_COLS;
  let t = grid_invocation(gid, nwg, WG);
  zm = gid.z;
  let c0 = (t % numColBlocks) * WIDE_COLS;
  let r0 = (t / numColBlocks) * WIDE_ROWS;
  if (r0 >= p.M) { return; }
  let lastRow = p.M - 1u;
  let x0 = xrow(min(r0 + 0u, lastRow));
  let x1 = xrow(min(r0 + 1u, lastRow));
  let x2 = xrow(min(r0 + 2u, lastRow));
  let x3 = xrow(min(r0 + 3u, lastRow));
  let x4 = xrow(min(r0 + 4u, lastRow));
  let x5 = xrow(min(r0 + 5u, lastRow));
  let x6 = xrow(min(r0 + 6u, lastRow));
  let x7 = xrow(min(r0 + 7u, lastRow));
  let x8 = xrow(min(r0 + 8u, lastRow));
  let x9 = xrow(min(r0 + 9u, lastRow));
  let x10 = xrow(min(r0 + 10u, lastRow));
  let x11 = xrow(min(r0 + 11u, lastRow));
  let x12 = xrow(min(r0 + 12u, lastRow));
  let x13 = xrow(min(r0 + 13u, lastRow));
  let x14 = xrow(min(r0 + 14u, lastRow));
  let x15 = xrow(min(r0 + 15u, lastRow));
  let w0 = wrow(c0 + 0u); let w1 = wrow(c0 + 1u); let w2 = wrow(c0 + 2u); let w3 = wrow(c0 + 3u);
  let w4 = wrow(c0 + 4u); let w5 = wrow(c0 + 5u); let w6 = wrow(c0 + 6u); let w7 = wrow(c0 + 7u);
  let w8 = wrow(c0 + 8u); let w9 = wrow(c0 + 9u); let w10 = wrow(c0 + 10u); let w11 = wrow(c0 + 11u);
  let w12 = wrow(c0 + 12u); let w13 = wrow(c0 + 13u); let w14 = wrow(c0 + 14u); let w15 = wrow(c0 + 15u);
  var a0_0 = vec4<f32>(); var a0_1 = vec4<f32>(); var a0_2 = vec4<f32>(); var a0_3 = vec4<f32>();
  var a1_0 = vec4<f32>(); var a1_1 = vec4<f32>(); var a1_2 = vec4<f32>(); var a1_3 = vec4<f32>();
  var a2_0 = vec4<f32>(); var a2_1 = vec4<f32>(); var a2_2 = vec4<f32>(); var a2_3 = vec4<f32>();
  var a3_0 = vec4<f32>(); var a3_1 = vec4<f32>(); var a3_2 = vec4<f32>(); var a3_3 = vec4<f32>();
  var a4_0 = vec4<f32>(); var a4_1 = vec4<f32>(); var a4_2 = vec4<f32>(); var a4_3 = vec4<f32>();
  var a5_0 = vec4<f32>(); var a5_1 = vec4<f32>(); var a5_2 = vec4<f32>(); var a5_3 = vec4<f32>();
  var a6_0 = vec4<f32>(); var a6_1 = vec4<f32>(); var a6_2 = vec4<f32>(); var a6_3 = vec4<f32>();
  var a7_0 = vec4<f32>(); var a7_1 = vec4<f32>(); var a7_2 = vec4<f32>(); var a7_3 = vec4<f32>();
  var a8_0 = vec4<f32>(); var a8_1 = vec4<f32>(); var a8_2 = vec4<f32>(); var a8_3 = vec4<f32>();
  var a9_0 = vec4<f32>(); var a9_1 = vec4<f32>(); var a9_2 = vec4<f32>(); var a9_3 = vec4<f32>();
  var a10_0 = vec4<f32>(); var a10_1 = vec4<f32>(); var a10_2 = vec4<f32>(); var a10_3 = vec4<f32>();
  var a11_0 = vec4<f32>(); var a11_1 = vec4<f32>(); var a11_2 = vec4<f32>(); var a11_3 = vec4<f32>();
  var a12_0 = vec4<f32>(); var a12_1 = vec4<f32>(); var a12_2 = vec4<f32>(); var a12_3 = vec4<f32>();
  var a13_0 = vec4<f32>(); var a13_1 = vec4<f32>(); var a13_2 = vec4<f32>(); var a13_3 = vec4<f32>();
  var a14_0 = vec4<f32>(); var a14_1 = vec4<f32>(); var a14_2 = vec4<f32>(); var a14_3 = vec4<f32>();
  var a15_0 = vec4<f32>(); var a15_1 = vec4<f32>(); var a15_2 = vec4<f32>(); var a15_3 = vec4<f32>();
  // One quantization group at a time: the 16 rows' (scale, offset) are read once per group (formats
  // without groups return constants, which the compiler folds away).
  for (var g0 = 0u; g0 < K4; g0 += W_GROUP_VEC4) {
    let s0 = w_scale(w0, g0); let s1 = w_scale(w1, g0); let s2 = w_scale(w2, g0); let s3 = w_scale(w3, g0);
    let s4 = w_scale(w4, g0); let s5 = w_scale(w5, g0); let s6 = w_scale(w6, g0); let s7 = w_scale(w7, g0);
    let s8 = w_scale(w8, g0); let s9 = w_scale(w9, g0); let s10 = w_scale(w10, g0); let s11 = w_scale(w11, g0);
    let s12 = w_scale(w12, g0); let s13 = w_scale(w13, g0); let s14 = w_scale(w14, g0); let s15 = w_scale(w15, g0);
    let gEnd = min(g0 + W_GROUP_VEC4, K4);
    for (var k = g0; k < gEnd; k++) {
      let m0 = mat4x4<f32>(w_dequant(w_raw4(w0, k), s0), w_dequant(w_raw4(w1, k), s1), w_dequant(w_raw4(w2, k), s2), w_dequant(w_raw4(w3, k), s3));
      let m1 = mat4x4<f32>(w_dequant(w_raw4(w4, k), s4), w_dequant(w_raw4(w5, k), s5), w_dequant(w_raw4(w6, k), s6), w_dequant(w_raw4(w7, k), s7));
      let m2 = mat4x4<f32>(w_dequant(w_raw4(w8, k), s8), w_dequant(w_raw4(w9, k), s9), w_dequant(w_raw4(w10, k), s10), w_dequant(w_raw4(w11, k), s11));
      let m3 = mat4x4<f32>(w_dequant(w_raw4(w12, k), s12), w_dequant(w_raw4(w13, k), s13), w_dequant(w_raw4(w14, k), s14), w_dequant(w_raw4(w15, k), s15));
      { let v = x[x0 + k]; a0_0 += v * m0; a0_1 += v * m1; a0_2 += v * m2; a0_3 += v * m3; }
      { let v = x[x1 + k]; a1_0 += v * m0; a1_1 += v * m1; a1_2 += v * m2; a1_3 += v * m3; }
      { let v = x[x2 + k]; a2_0 += v * m0; a2_1 += v * m1; a2_2 += v * m2; a2_3 += v * m3; }
      { let v = x[x3 + k]; a3_0 += v * m0; a3_1 += v * m1; a3_2 += v * m2; a3_3 += v * m3; }
      { let v = x[x4 + k]; a4_0 += v * m0; a4_1 += v * m1; a4_2 += v * m2; a4_3 += v * m3; }
      { let v = x[x5 + k]; a5_0 += v * m0; a5_1 += v * m1; a5_2 += v * m2; a5_3 += v * m3; }
      { let v = x[x6 + k]; a6_0 += v * m0; a6_1 += v * m1; a6_2 += v * m2; a6_3 += v * m3; }
      { let v = x[x7 + k]; a7_0 += v * m0; a7_1 += v * m1; a7_2 += v * m2; a7_3 += v * m3; }
      { let v = x[x8 + k]; a8_0 += v * m0; a8_1 += v * m1; a8_2 += v * m2; a8_3 += v * m3; }
      { let v = x[x9 + k]; a9_0 += v * m0; a9_1 += v * m1; a9_2 += v * m2; a9_3 += v * m3; }
      { let v = x[x10 + k]; a10_0 += v * m0; a10_1 += v * m1; a10_2 += v * m2; a10_3 += v * m3; }
      { let v = x[x11 + k]; a11_0 += v * m0; a11_1 += v * m1; a11_2 += v * m2; a11_3 += v * m3; }
      { let v = x[x12 + k]; a12_0 += v * m0; a12_1 += v * m1; a12_2 += v * m2; a12_3 += v * m3; }
      { let v = x[x13 + k]; a13_0 += v * m0; a13_1 += v * m1; a13_2 += v * m2; a13_3 += v * m3; }
      { let v = x[x14 + k]; a14_0 += v * m0; a14_1 += v * m1; a14_2 += v * m2; a14_3 += v * m3; }
      { let v = x[x15 + k]; a15_0 += v * m0; a15_1 += v * m1; a15_2 += v * m2; a15_3 += v * m3; }
    }
  }
  // The stores, a row per iteration (see the comment on the epilogue above).
  var acc: array<vec4<f32>, 64>;
  acc[0u] = a0_0; acc[1u] = a0_1; acc[2u] = a0_2; acc[3u] = a0_3;
  acc[4u] = a1_0; acc[5u] = a1_1; acc[6u] = a1_2; acc[7u] = a1_3;
  acc[8u] = a2_0; acc[9u] = a2_1; acc[10u] = a2_2; acc[11u] = a2_3;
  acc[12u] = a3_0; acc[13u] = a3_1; acc[14u] = a3_2; acc[15u] = a3_3;
  acc[16u] = a4_0; acc[17u] = a4_1; acc[18u] = a4_2; acc[19u] = a4_3;
  acc[20u] = a5_0; acc[21u] = a5_1; acc[22u] = a5_2; acc[23u] = a5_3;
  acc[24u] = a6_0; acc[25u] = a6_1; acc[26u] = a6_2; acc[27u] = a6_3;
  acc[28u] = a7_0; acc[29u] = a7_1; acc[30u] = a7_2; acc[31u] = a7_3;
  acc[32u] = a8_0; acc[33u] = a8_1; acc[34u] = a8_2; acc[35u] = a8_3;
  acc[36u] = a9_0; acc[37u] = a9_1; acc[38u] = a9_2; acc[39u] = a9_3;
  acc[40u] = a10_0; acc[41u] = a10_1; acc[42u] = a10_2; acc[43u] = a10_3;
  acc[44u] = a11_0; acc[45u] = a11_1; acc[46u] = a11_2; acc[47u] = a11_3;
  acc[48u] = a12_0; acc[49u] = a12_1; acc[50u] = a12_2; acc[51u] = a12_3;
  acc[52u] = a13_0; acc[53u] = a13_1; acc[54u] = a13_2; acc[55u] = a13_3;
  acc[56u] = a14_0; acc[57u] = a14_1; acc[58u] = a14_2; acc[59u] = a14_3;
  acc[60u] = a15_0; acc[61u] = a15_1; acc[62u] = a15_2; acc[63u] = a15_3;
  for (var r = 0u; r < 16u; r++) {
    if (r0 + r >= p.M) { break; }
    let i = r * 4u;
    store4(r0 + r, c0, acc[i]); store4(r0 + r, c0 + 4u, acc[i + 1u]); store4(r0 + r, c0 + 8u, acc[i + 2u]); store4(r0 + r, c0 + 12u, acc[i + 3u]);
  }
}

@compute @workgroup_size(WG)
fn main_narrow(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let K4 = p.K / 4u;
  let cols = 4u * NARROW_QUADS;
  let numColBlocks = (p.N + cols - 1u) / cols;
  let t = grid_invocation(gid, nwg, WG);
  let c0 = (t % numColBlocks) * cols;
  let r = t / numColBlocks;
  if (r >= p.M) { return; }
  zm = gid.z;
  let x0 = xrow(r);
  let w0 = wrow(c0); let w1 = wrow(c0 + 1u); let w2 = wrow(c0 + 2u); let w3 = wrow(c0 + 3u);
  let w4 = wrow(c0 + 4u); let w5 = wrow(c0 + 5u); let w6 = wrow(c0 + 6u); let w7 = wrow(c0 + 7u);
  let w8 = wrow(c0 + 8u); let w9 = wrow(c0 + 9u); let w10 = wrow(c0 + 10u); let w11 = wrow(c0 + 11u);
  let w12 = wrow(c0 + 12u); let w13 = wrow(c0 + 13u); let w14 = wrow(c0 + 14u); let w15 = wrow(c0 + 15u);
  var a0 = vec4<f32>();
  var a1 = vec4<f32>();
  var a2 = vec4<f32>();
  var a3 = vec4<f32>();
  // Formats with W_NARROW_GROUPS: whole quantization groups first, one XGroup of x, then each format's
  // cheapest group dot product. The others (f32) take every vec4 in the loop after it.
  var numGroups = 0u;
  if (W_NARROW_GROUPS) { numGroups = p.K / (4u * W_GROUP_VEC4); }
  for (var g = 0u; g < numGroups; g++) {
    let xb = x0 + g * W_GROUP_VEC4;
    let xg = x_group(x[xb], x[xb + 1u], x[xb + 2u], x[xb + 3u], x[xb + 4u], x[xb + 5u], x[xb + 6u], x[xb + 7u]);
    a0 += vec4<f32>(w_dot_group(w0, g, xg), w_dot_group(w1, g, xg), w_dot_group(w2, g, xg), w_dot_group(w3, g, xg));
    a1 += vec4<f32>(w_dot_group(w4, g, xg), w_dot_group(w5, g, xg), w_dot_group(w6, g, xg), w_dot_group(w7, g, xg));
    if (NARROW_QUADS == 4u) {
      a2 += vec4<f32>(w_dot_group(w8, g, xg), w_dot_group(w9, g, xg), w_dot_group(w10, g, xg), w_dot_group(w11, g, xg));
      a3 += vec4<f32>(w_dot_group(w12, g, xg), w_dot_group(w13, g, xg), w_dot_group(w14, g, xg), w_dot_group(w15, g, xg));
    }
  }
  // Then the vec4s of a last, partial group (or every vec4).
  for (var k = numGroups * W_GROUP_VEC4; k < K4; k++) {
    let v = x[x0 + k];
    a0 += w_mul4(v, w0, w1, w2, w3, k);
    a1 += w_mul4(v, w4, w5, w6, w7, k);
    if (NARROW_QUADS == 4u) {
      a2 += w_mul4(v, w8, w9, w10, w11, k);
      a3 += w_mul4(v, w12, w13, w14, w15, k);
    }
  }
  store4(r, c0, a0);
  store4(r, c0 + 4u, a1);
  if (NARROW_QUADS == 4u) {
    store4(r, c0 + 8u, a2);
    store4(r, c0 + 12u, a3);
  }
}

// Row r's group g of x, prepared for w_group_dot.
fn x_group_at(xr: u32, g: u32) -> XGroup {
  let xb = xr + g * W_GROUP_VEC4;
  return x_group(x[xb], x[xb + 1u], x[xb + 2u], x[xb + 3u], x[xb + 4u], x[xb + 5u], x[xb + 6u], x[xb + 7u]);
}

// The 4 dot products of one row of x with a column quad's loaded groups.
fn quad_dot(q0: WGroup, q1: WGroup, q2: WGroup, q3: WGroup, xg: XGroup) -> vec4<f32> {
  return vec4<f32>(w_group_dot(q0, xg), w_group_dot(q1, xg), w_group_dot(q2, xg), w_group_dot(q3, xg));
}

@compute @workgroup_size(WG)
fn main_narrow_rows(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let K4 = p.K / 4u;
  let numColBlocks = (p.N + 7u) / 8u;
  let t = grid_invocation(gid, nwg, WG);
  let c0 = (t % numColBlocks) * 8u;
  let r0 = (t / numColBlocks) * NARROW_ROWS;
  if (r0 >= p.M) { return; }
  zm = gid.z;
  let lastRow = p.M - 1u;
  let x0 = xrow(r0);
  let x1 = xrow(min(r0 + 1u, lastRow));
  let x2 = xrow(min(r0 + 2u, lastRow));
  let x3 = xrow(min(r0 + 3u, lastRow));
  let w0 = wrow(c0); let w1 = wrow(c0 + 1u); let w2 = wrow(c0 + 2u); let w3 = wrow(c0 + 3u);
  let w4 = wrow(c0 + 4u); let w5 = wrow(c0 + 5u); let w6 = wrow(c0 + 6u); let w7 = wrow(c0 + 7u);
  var a0_0 = vec4<f32>(); var a0_1 = vec4<f32>();
  var a1_0 = vec4<f32>(); var a1_1 = vec4<f32>();
  var a2_0 = vec4<f32>(); var a2_1 = vec4<f32>();
  var a3_0 = vec4<f32>(); var a3_1 = vec4<f32>();
  var numGroups = 0u;
  if (W_NARROW_GROUPS) { numGroups = p.K / (4u * W_GROUP_VEC4); }
  for (var g = 0u; g < numGroups; g++) {
    let xg0 = x_group_at(x0, g);
    let xg1 = x_group_at(x1, g);
    let p0 = w_group(w0, g); let p1 = w_group(w1, g); let p2 = w_group(w2, g); let p3 = w_group(w3, g);
    a0_0 += quad_dot(p0, p1, p2, p3, xg0);
    a1_0 += quad_dot(p0, p1, p2, p3, xg1);
    if (NARROW_ROWS == 4u) {
      let xg2 = x_group_at(x2, g);
      let xg3 = x_group_at(x3, g);
      a2_0 += quad_dot(p0, p1, p2, p3, xg2);
      a3_0 += quad_dot(p0, p1, p2, p3, xg3);
      let q0 = w_group(w4, g); let q1 = w_group(w5, g); let q2 = w_group(w6, g); let q3 = w_group(w7, g);
      a0_1 += quad_dot(q0, q1, q2, q3, xg0);
      a1_1 += quad_dot(q0, q1, q2, q3, xg1);
      a2_1 += quad_dot(q0, q1, q2, q3, xg2);
      a3_1 += quad_dot(q0, q1, q2, q3, xg3);
    } else {
      let q0 = w_group(w4, g); let q1 = w_group(w5, g); let q2 = w_group(w6, g); let q3 = w_group(w7, g);
      a0_1 += quad_dot(q0, q1, q2, q3, xg0);
      a1_1 += quad_dot(q0, q1, q2, q3, xg1);
    }
  }
  // The vec4s of a last, partial group (or every vec4), as main_narrow takes them: each quad of W loaded
  // once for all the rows (w_quad_mul(x, w_quad(..)) is w_mul4).
  for (var k = numGroups * W_GROUP_VEC4; k < K4; k++) {
    let q0 = w_quad(w0, w1, w2, w3, k);
    let q1 = w_quad(w4, w5, w6, w7, k);
    { let v = x[x0 + k]; a0_0 += w_quad_mul(v, q0); a0_1 += w_quad_mul(v, q1); }
    { let v = x[x1 + k]; a1_0 += w_quad_mul(v, q0); a1_1 += w_quad_mul(v, q1); }
    if (NARROW_ROWS == 4u) {
      { let v = x[x2 + k]; a2_0 += w_quad_mul(v, q0); a2_1 += w_quad_mul(v, q1); }
      { let v = x[x3 + k]; a3_0 += w_quad_mul(v, q0); a3_1 += w_quad_mul(v, q1); }
    }
  }
  store4(r0, c0, a0_0); store4(r0, c0 + 4u, a0_1);
  store4(r0 + 1u, c0, a1_0); store4(r0 + 1u, c0 + 4u, a1_1);
  if (NARROW_ROWS == 4u) {
    store4(r0 + 2u, c0, a2_0); store4(r0 + 2u, c0 + 4u, a2_1);
    store4(r0 + 3u, c0, a3_0); store4(r0 + 3u, c0 + 4u, a3_1);
  }
}
