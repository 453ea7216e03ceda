// pixel-shuffle.wgsl: Idefics3's space-to-depth on a square grid of patch embeddings.
// Matches HF `Idefics3Connector.pixel_shuffle` (view/permute/reshape), which works out to
//   out[b, oh * (W / s) + ow, e'] = x[b, h * W + w, e] with
//   h = oh * s + e' / (E * s),   w = ow * s + (e' % (E * s)) / E,   e = e' % E
// where W = H = sqrt(seq), E = embed dim, s = scale_factor, e' in [0, E * s * s).
// x: [batch, seq, E] f32   out: [batch, seq / s^2, E * s^2] f32
// grid: linear over batch * seq * E / WG (x, y split)

override WG: u32 = 64;

struct Params { batch: u32, side: u32, embed: u32, scale: u32 }

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> out: array<f32>;
@group(0) @binding(2) var<uniform> p: Params;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let seq = p.side * p.side;
  let idx = grid_invocation(gid, nwg, WG);
  if (idx >= p.batch * seq * p.embed) { return; }
  let outSide = p.side / p.scale;
  let outDim = p.embed * p.scale * p.scale;
  let ep = idx % outDim;
  let o = (idx / outDim) % (outSide * outSide);
  let bt = idx / (outDim * outSide * outSide);
  let oh = o / outSide;
  let ow = o % outSide;
  let h = oh * p.scale + ep / (p.embed * p.scale);
  let w = ow * p.scale + (ep % (p.embed * p.scale)) / p.embed;
  let e = ep % p.embed;
  out[idx] = x[(bt * seq + h * p.side + w) * p.embed + e];
}
