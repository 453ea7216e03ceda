// patch-embed.wgsl: im2col for a P x P, stride-P convolution over channels-first images, so the
// convolution becomes one matmul against the conv weight viewed as [outDim, C * P * P]. Any P; pixels
// past the last whole patch (H or W not a multiple of P) are not used, as in Conv2d without padding.
// Matches HF `SiglipVisionEmbeddings.patch_embedding` followed by flatten(2).transpose(1, 2):
//   patches[b * numPatches + py * (W / P) + px, c * P * P + ky * P + kx]
//     = pixels[b, c, py * P + ky, px * P + kx]
// pixels: [batch, C, H, W] f32   patches: [batch * floor(H / P) * floor(W / P), C * P * P] f32
// grid: linear over the patches' elements / WG (x, y split)

override WG: u32 = 64;

struct Params { batch: u32, channels: u32, height: u32, width: u32, patchSize: u32, _pad0: u32, _pad1: u32, _pad2: u32 }

@group(0) @binding(0) var<storage, read> pixels: array<f32>;
@group(0) @binding(1) var<storage, read_write> patches: array<f32>;
@group(0) @binding(2) var<uniform> p: Params;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let gridW = p.width / p.patchSize;
  let gridH = p.height / p.patchSize;
  let cols = p.channels * p.patchSize * p.patchSize;
  let idx = grid_invocation(gid, nwg, WG);
  if (idx >= p.batch * gridH * gridW * cols) { return; }
  let col = idx % cols;
  let row = idx / cols;
  let b = row / (gridH * gridW);
  let py = (row % (gridH * gridW)) / gridW;
  let px = row % gridW;
  let c = col / (p.patchSize * p.patchSize);
  let ky = (col % (p.patchSize * p.patchSize)) / p.patchSize;
  let kx = col % p.patchSize;
  patches[idx] = pixels[((b * p.channels + c) * p.height + py * p.patchSize + ky) * p.width + px * p.patchSize + kx];
}
