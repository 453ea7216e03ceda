// conv1d.wgsl: im2col for a 1-D convolution (kernel k, stride s, zero padding p on both ends), so
// the convolution becomes one matmul against the conv weight viewed as [outDim, C * k] (HF stores
// Conv1d weights as [outDim, C, k], the same bytes). Matches torch Conv1d:
//   cols[b * Tout + t, c * k + j] = x[b, c, t * s + j - p]   (0 outside [0, Tin))
// The input is read through strides, so it may be channels-first ([batch, C, Tin], a log-mel
// spectrogram) or time-first ([batch, Tin, C], the previous convolution's matmul output):
//   x[b, c, i] = x[b * batchStride + c * channelStride + i * timeStride]
// x: f32   cols: [batch * Tout, C * k] f32
// grid: linear over cols' elements / WG (x, y split)

override WG: u32 = 64;

struct Params {
  batch: u32, channels: u32, tIn: u32, tOut: u32,
  kernel: u32, stride: u32, padding: u32, batchStride: u32,
  channelStride: u32, timeStride: u32, _pad0: u32, _pad1: u32,
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> cols: array<f32>;
@group(0) @binding(2) var<uniform> p: Params;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let width = p.channels * p.kernel;
  let idx = grid_invocation(gid, nwg, WG);
  if (idx >= p.batch * p.tOut * width) { return; }
  let col = idx % width;
  let row = idx / width;
  let b = row / p.tOut;
  let t = row % p.tOut;
  let c = col / p.kernel;
  let j = col % p.kernel;
  // i = t * s + j - p, as a signed position: negative or past the end reads the zero padding.
  let i = i32(t * p.stride + j) - i32(p.padding);
  var v = 0.0;
  if (i >= 0 && u32(i) < p.tIn) {
    v = x[b * p.batchStride + c * p.channelStride + u32(i) * p.timeStride];
  }
  cols[idx] = v;
}
