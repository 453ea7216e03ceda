// Idefics3 pixel shuffle (space-to-depth by scale_factor) on a square grid of patch embeddings.
//   x: [batch, seq, embed] f32, seq = side^2   out: [batch, seq / s^2, embed * s^2] f32

import source from '../../shaders/pixel-shuffle.wgsl?raw';
import { UnsupportedShapeError } from '../errors';
import type { GpuContext } from '../gpu/context';
import type { Tensor } from '../gpu/tensor';
import { DEFAULT_WORKGROUP_SIZE, expectPositiveInt, expectTensor, expectWorkgroupSize, linearGrid } from './checks';
import { createDispatch, packParams, type KernelDispatch } from './dispatch';

export interface PixelShuffleShape {
  batch: number;
  seq: number;
  embed: number;
  scale: number;
}

export function pixelShuffleOutputShape(shape: PixelShuffleShape): [number, number, number] {
  const { batch, seq, embed, scale } = shape;
  return [batch, seq / (scale * scale), embed * scale * scale];
}

/** The side of the square patch grid; throws when seq is not a square divisible by scale. */
export function pixelShuffleSide(shape: PixelShuffleShape): number {
  const side = Math.round(Math.sqrt(shape.seq));
  if (side * side !== shape.seq || side % shape.scale !== 0) {
    throw new UnsupportedShapeError(
      `pixel-shuffle: seq ${shape.seq} must be a square whose side is divisible by scale_factor ${shape.scale}`,
    );
  }
  return side;
}

/** Follows HF's view/permute/reshape sequence through its index arithmetic. */
export function pixelShuffleReference(x: Float32Array, shape: PixelShuffleShape): Float32Array {
  const { batch, embed: E, scale: s } = shape;
  const side = pixelShuffleSide(shape);
  const [, outSeq, outDim] = pixelShuffleOutputShape(shape);
  const out = new Float32Array(batch * outSeq * outDim);
  const outSide = side / s;
  for (let b = 0; b < batch; b++) {
    for (let o = 0; o < outSeq; o++) {
      const oh = Math.floor(o / outSide);
      const ow = o % outSide;
      for (let ep = 0; ep < outDim; ep++) {
        const h = oh * s + Math.floor(ep / (E * s));
        const w = ow * s + Math.floor((ep % (E * s)) / E);
        const e = ep % E;
        out[(b * outSeq + o) * outDim + ep] = x[(b * side * side + h * side + w) * E + e];
      }
    }
  }
  return out;
}

export async function preparePixelShuffle(
  gpu: GpuContext,
  io: { x: Tensor; out: Tensor },
  shape: PixelShuffleShape,
  options: { workgroupSize?: number } = {},
): Promise<KernelDispatch> {
  const kernel = 'pixel-shuffle';
  const { batch, seq, embed, scale } = shape;
  const wg = options.workgroupSize ?? DEFAULT_WORKGROUP_SIZE;
  expectPositiveInt(kernel, 'batch', batch);
  expectPositiveInt(kernel, 'embed', embed);
  expectPositiveInt(kernel, 'scale', scale);
  const side = pixelShuffleSide(shape);
  expectWorkgroupSize(gpu, kernel, wg);
  expectTensor(gpu, kernel, 'x', io.x, [batch, seq, embed]);
  expectTensor(gpu, kernel, 'out', io.out, pixelShuffleOutputShape(shape));
  return createDispatch(gpu, {
    label: kernel,
    code: source,
    constants: { WG: wg },
    resources: [io.x, io.out],
    params: packParams([
      ['u32', batch],
      ['u32', side],
      ['u32', embed],
      ['u32', scale],
    ]),
    grid: linearGrid(gpu, kernel, Math.ceil((batch * seq * embed) / wg)),
    cost: { flops: 0, bytes: 8 * batch * seq * embed },
  });
}
