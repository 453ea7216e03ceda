// attention-softmax.wgsl: the middle step of attention run as matmuls (src/kernels/vit-attention.ts,
// plan 'matmuls'). In place over a block of score rows S = Q Kᵀ (unscaled), each row becomes
//   P[r, j] = exp(scale * S[r, j] - m) / l     for the keys j that are real (keyOk[j] = 1)
//   P[r, j] = 0                                for masked keys and the padding columns (keyOk[j] = 0)
// with m the row's largest scaled unmasked score and l the sum of the exps (HF SiglipAttention: masked
// keys get no weight). A row with no unmasked key becomes all zeros. One invocation per row, no workgroup
// memory and no barrier (the CPU-adapter path). Three passes over the row, which stays in cache after
// the first: the max, then exp() once per score with the sum, then the normalisation.
//
// scores: [rows, stride] f32 as vec4 (stride = keys rounded up to 4)
// keyOk:  [stride / 4] vec4<f32> of 1.0 / 0.0 (attention-key-mask.wgsl)   grid: linear over rows (x, y split)
// Rows row0 .. row0 + rows - 1 (row0 > 0: one head's rows, a piece of paced encoding).

override WG: u32 = 64;

struct Params { rows: u32, stride4: u32, scale: f32, row0: u32 }

@group(0) @binding(0) var<storage, read_write> scores: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read> keyOk: array<vec4<f32>>;
@group(0) @binding(2) var<uniform> p: Params;

// Most negative finite f32: the max of a row before any unmasked key.
const LOWEST: f32 = -0x1.fffffep+127f;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let r = grid_invocation(gid, nwg, WG);
  if (r >= p.rows) { return; }
  let base = (p.row0 + r) * p.stride4;
  var m4 = vec4<f32>(LOWEST);
  for (var j4 = 0u; j4 < p.stride4; j4++) {
    m4 = max(m4, select(vec4<f32>(LOWEST), scores[base + j4] * p.scale, keyOk[j4] > vec4<f32>(0.5)));
  }
  let m = vec4<f32>(max(max(m4.x, m4.y), max(m4.z, m4.w)));
  var l4 = vec4<f32>(0.0);
  for (var j4 = 0u; j4 < p.stride4; j4++) {
    let e = select(vec4<f32>(0.0), exp(scores[base + j4] * p.scale - m), keyOk[j4] > vec4<f32>(0.5));
    scores[base + j4] = e;
    l4 += e;
  }
  let l = (l4.x + l4.y) + (l4.z + l4.w);
  let inv = select(0.0, 1.0 / l, l > 0.0);
  for (var j4 = 0u; j4 < p.stride4; j4++) {
    scores[base + j4] *= inv;
  }
}
