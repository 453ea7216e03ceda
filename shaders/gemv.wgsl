// gemv.wgsl: y = act(x · Wᵀ + b) for decode rows (M <= 8): split-K with a workgroup reduction, so every
// invocation does useful work on a GPU (the tiled matmul.wgsl would run M = 1 in 64 x 64 tiles, 1/64 of
// each tile busy). For the `workgroup` kernel variant; CPU adapters use matmul-register.wgsl main_narrow.
//
// One workgroup = COLS (4) output columns for all ROWS rows of x. Invocation t sums the quantization
// groups (32 values) g = t, t + WG, t + 2 WG, ... of those 4 rows of W against the same slices of every
// x row (w_dot_group), then the vec4s of a partial last group the same way, so consecutive invocations
// read consecutive memory of each W row (coalesced), and W is read once per step whatever M is. The partial sums are then added across the workgroup by reduce_rows() (lib/
// reduce-rows.wgsl with workgroup memory, or lib/reduce-rows-subgroups.wgsl with subgroupAdd when the
// device has `subgroups`), and invocation m < ROWS writes row m's 4 outputs.
//
// x: [M, K] f32 as vec4 along K (K % 4 == 0)    W: [N, K] in any storage format (lib/weights-*.wgsl
// prepended: w_row, w_mul4; dequantized in registers)    b: [N] f32 (read when the epilogue adds a bias)
// y: [M, N] f32 (or columns of wider rows: y_off, y_stride)    grid: ceil(N / 4) workgroups, linear (x, y split)

override WG: u32 = 64;
// M, the rows of x (1..MAX_ROWS): a pipeline per M, so the row loops have constant bounds.
override ROWS: u32 = 1u;
const COLS: u32 = 4u;

// The fields after epilogue are matmul-register.wgsl's layout; of them these kernels read y_off and
// y_stride (y[r, c] is y[y_off + r * y_stride + c]: y_off 0 and y_stride N but for a row-split weight's part).
struct Params {
  M: u32, N: u32, K: u32, epilogue: u32,
  x_off: u32, x_stride: u32, x_batch: u32,
  w_off: u32, w_stride: u32, w_batch: u32,
  y_off: u32, y_stride: u32, y_batch: u32,
}

@group(0) @binding(0) var<storage, read> x: array<vec4<f32>>;
// @binding(1) w_data and @binding(2) w_scales: declared by the lib/weights-*.wgsl in front of this file
@group(0) @binding(3) var<storage, read> b: array<f32>;
@group(0) @binding(4) var<storage, read_write> y: array<f32>;
@group(0) @binding(5) var<uniform> p: Params;

@compute @workgroup_size(WG)
fn main(
  @builtin(workgroup_id) wid: vec3<u32>,
  @builtin(num_workgroups) nwg: vec3<u32>,
  @builtin(local_invocation_index) lid: u32,
) {
  // No early return before reduce_rows(): every invocation takes part in its barriers.
  let c0 = grid_workgroup(wid, nwg) * COLS;
  let last = p.N - 1u;
  let r0 = w_row(min(c0, last), p.K);
  let r1 = w_row(min(c0 + 1u, last), p.K);
  let r2 = w_row(min(c0 + 2u, last), p.K);
  let r3 = w_row(min(c0 + 3u, last), p.K);
  let K4 = p.K / 4u;
  var acc: array<vec4<f32>, MAX_ROWS>;
  // Whole quantization groups, one per invocation per step (16 bytes of a q4 row: coalesced), then the
  // vec4s of a last, partial group.
  let numGroups = p.K / (4u * W_GROUP_VEC4);
  for (var g = lid; g < numGroups; g += WG) {
    for (var m = 0u; m < ROWS; m++) {
      let xb = m * K4 + g * W_GROUP_VEC4;
      let xg = x_group(x[xb], x[xb + 1u], x[xb + 2u], x[xb + 3u], x[xb + 4u], x[xb + 5u], x[xb + 6u], x[xb + 7u]);
      acc[m] += vec4<f32>(w_dot_group(r0, g, xg), w_dot_group(r1, g, xg), w_dot_group(r2, g, xg), w_dot_group(r3, g, xg));
    }
  }
  for (var k4 = numGroups * W_GROUP_VEC4 + lid; k4 < K4; k4 += WG) {
    for (var m = 0u; m < ROWS; m++) {
      acc[m] += w_mul4(x[m * K4 + k4], r0, r1, r2, r3, k4);
    }
  }
  let total = reduce_rows(&acc, lid);
  if (lid < ROWS && c0 < p.N) {
    for (var i = 0u; i < COLS; i++) {
      let col = c0 + i;
      if (col < p.N) {
        var o = total[i];
        if (epilogue_bias(p.epilogue)) { o += b[col]; }
        o = activate(o, epilogue_activation(p.epilogue));
        let yi = p.y_off + lid * p.y_stride + col;
        if (epilogue_accumulate(p.epilogue)) { o += y[yi]; }
        y[yi] = o;
      }
    }
  }
}
