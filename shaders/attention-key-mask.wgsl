// attention-key-mask.wgsl: one image's key mask as vec4s of 1.0 (a real key) / 0.0 (a masked key or a
// padding column keys <= j < stride), for attention-softmax.wgsl, which reads it once per 4 scores
// instead of four u32s with bounds checks.
// mask: [batch * tokens] u32, the image's keys at mask[maskOff ..]   keyOk: [stride / 4] vec4<f32>
// grid: linear over stride / 4 (x, y split)

override WG: u32 = 64;

struct Params { keys: u32, stride4: u32, maskOff: u32 }

@group(0) @binding(0) var<storage, read> mask: array<u32>;
@group(0) @binding(1) var<storage, read_write> keyOk: array<vec4<f32>>;
@group(0) @binding(2) var<uniform> p: Params;

fn ok(j: u32) -> f32 {
  return select(0.0, 1.0, j < p.keys && mask[p.maskOff + min(j, p.keys - 1u)] != 0u);
}

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = grid_invocation(gid, nwg, WG);
  if (i >= p.stride4) { return; }
  let j = 4u * i;
  keyOk[i] = vec4<f32>(ok(j), ok(j + 1u), ok(j + 2u), ok(j + 3u));
}
