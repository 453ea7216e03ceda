// Patch embedding: a P x P, stride-P convolution over channels-first RGB as one matmul.
// patch-embed.wgsl lays the image out as patches (im2col), then matmul multiplies by the conv weight
// viewed as [outDim, C * P * P] (HF stores it as [outDim, C, P, P], the same bytes) and adds the bias.
//   pixels: [batch, C, H, W] f32   weight: [outDim, C * P * P] f32 or packed   bias: [outDim] f32
//   y: [batch * floor(H / P) * floor(W / P), outDim] f32, patches in row-major (py, px) order
// Any patch size; like torch Conv2d(stride=P) without padding, pixels past the last whole patch of a row
// or column are not used (SigLIP so400m at 384 px with P = 14 sees 27 x 27 patches).

import source from '../../shaders/patch-embed.wgsl?raw';
import { UnsupportedShapeError } from '../errors';
import type { GpuContext } from '../gpu/context';
import type { Tensor } from '../gpu/tensor';
import { DEFAULT_WORKGROUP_SIZE, expectPositiveInt, expectTensor, expectWeight, expectWorkgroupSize, linearGrid } from './checks';
import { createDispatch, DispatchSequence, packParams, type Dispatch } from './dispatch';
import { prepareMatmul, type MatmulOptions } from './matmul';
import type { Weight } from './weight-format';

export interface PatchEmbedShape {
  batch: number;
  channels: number;
  height: number;
  width: number;
  patch: number;
  outDim: number;
}

export function patchEmbedNumPatches(shape: PatchEmbedShape): number {
  return shape.batch * Math.floor(shape.height / shape.patch) * Math.floor(shape.width / shape.patch);
}

/** Direct convolution in float64 (no im2col), the reference for the two-step GPU version. */
export function patchEmbedReference(pixels: Float32Array, weight: Float32Array, bias: Float32Array, shape: PatchEmbedShape): Float32Array {
  const { batch, channels: C, height: H, width: W, patch: P, outDim } = shape;
  const gh = Math.floor(H / P);
  const gw = Math.floor(W / P);
  const y = new Float32Array(batch * gh * gw * outDim);
  for (let b = 0; b < batch; b++) {
    for (let py = 0; py < gh; py++) {
      for (let px = 0; px < gw; px++) {
        const row = (b * gh + py) * gw + px;
        for (let o = 0; o < outDim; o++) {
          let acc = bias[o];
          for (let c = 0; c < C; c++) {
            for (let ky = 0; ky < P; ky++) {
              const pixRow = ((b * C + c) * H + py * P + ky) * W + px * P;
              const wRow = ((o * C + c) * P + ky) * P;
              for (let kx = 0; kx < P; kx++) acc += pixels[pixRow + kx] * weight[wRow + kx];
            }
          }
          y[row * outDim + o] = acc;
        }
      }
    }
  }
  return y;
}

export async function preparePatchEmbed(
  gpu: GpuContext,
  io: { pixels: Tensor; weight: Weight; bias: Tensor; y: Tensor },
  shape: PatchEmbedShape,
  options: { workgroupSize?: number; matmul?: MatmulOptions } = {},
): Promise<Dispatch> {
  const kernel = 'patch-embed';
  const { batch, channels, height, width, patch, outDim } = shape;
  for (const [name, v] of Object.entries(shape)) expectPositiveInt(kernel, name, v);
  if (height < patch || width < patch) {
    throw new UnsupportedShapeError(`patch-embed: image ${height}x${width} is smaller than one ${patch}x${patch} patch`);
  }
  const wg = options.workgroupSize ?? DEFAULT_WORKGROUP_SIZE;
  expectWorkgroupSize(gpu, kernel, wg);
  const numPatches = patchEmbedNumPatches(shape);
  const cols = channels * patch * patch;
  expectTensor(gpu, kernel, 'pixels', io.pixels, [batch, channels, height, width]);
  expectWeight(gpu, kernel, 'weight', io.weight, [outDim, cols]);
  expectTensor(gpu, kernel, 'bias', io.bias, [outDim]);
  expectTensor(gpu, kernel, 'y', io.y, [numPatches, outDim]);
  const patches = gpu.createTensor([numPatches, cols], 'f32', `${kernel}.patches`);
  try {
    const im2col = await createDispatch(gpu, {
      label: kernel,
      code: source,
      constants: { WG: wg },
      resources: [io.pixels, patches],
      params: packParams([
        ['u32', batch],
        ['u32', channels],
        ['u32', height],
        ['u32', width],
        ['u32', patch],
      ]),
      grid: linearGrid(gpu, kernel, Math.ceil((numPatches * cols) / wg)),
      // im2col: the pixels of whole patches read once, the patch rows written.
      cost: { flops: 0, bytes: 8 * numPatches * cols },
    });
    const matmul = await prepareMatmul(
      gpu,
      { x: patches, weight: io.weight, bias: io.bias, y: io.y },
      { M: numPatches, N: outDim, K: cols },
      options.matmul,
    );
    return new DispatchSequence(kernel, [im2col, matmul], () => gpu.release(patches));
  } catch (e) {
    gpu.release(patches);
    throw e;
  }
}
