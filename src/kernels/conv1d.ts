// A 1-D convolution (torch Conv1d: kernel k, stride s, zero padding p) as im2col + one matmul, with the
// matmul's fused epilogue (bias, activation). conv1d.wgsl lays the input out as rows of C * k
// values; matmul multiplies them by the weight viewed as [outDim, C * k] (HF stores [outDim, C, k]).
//   x:      [batch, C, Tin] ('channels-first': a log-mel spectrogram) or [batch, Tin, C] ('time-first')
//   weight: [outDim, C * k] f32 or packed   bias: [outDim] f32
//   y:      [batch * Tout, outDim] f32, Tout = floor((Tin + 2p - k) / s) + 1: time-first, one row per step
// The Whisper encoder's stem (HF `VoxtralEncoder.conv1` / `conv2`) is two of these.

import source from '../../shaders/conv1d.wgsl?raw';
import { UnsupportedShapeError } from '../errors';
import type { GpuContext } from '../gpu/context';
import type { Tensor } from '../gpu/tensor';
import { activate, type Activation } from './activations';
import { DEFAULT_WORKGROUP_SIZE, expectPositiveInt, expectTensor, expectWeight, expectWorkgroupSize, linearGrid } from './checks';
import { createDispatch, DispatchSequence, packParams, type Dispatch } from './dispatch';
import { prepareMatmul, type MatmulOptions } from './matmul';
import type { Weight } from './weight-format';

export interface Conv1dShape {
  batch: number;
  channels: number;
  /** Input steps per batch item. */
  length: number;
  kernel: number;
  stride: number;
  padding: number;
  outDim: number;
  /** How x is laid out: [batch, C, Tin] or [batch, Tin, C]. */
  layout: 'channels-first' | 'time-first';
}

/** Output steps per batch item: floor((Tin + 2p - k) / s) + 1. */
export function conv1dOutputLength(shape: Pick<Conv1dShape, 'length' | 'kernel' | 'stride' | 'padding'>): number {
  return Math.floor((shape.length + 2 * shape.padding - shape.kernel) / shape.stride) + 1;
}

function strides(shape: Conv1dShape): { batch: number; channel: number; time: number } {
  const { channels: C, length: T } = shape;
  return shape.layout === 'channels-first' ? { batch: C * T, channel: T, time: 1 } : { batch: C * T, channel: 1, time: C };
}

/** Direct convolution in float64 (no im2col), the reference for the two-step GPU version. */
export function conv1dReference(
  x: Float32Array,
  weight: Float32Array,
  bias: Float32Array,
  shape: Conv1dShape,
  activation: Activation = 'none',
): Float32Array {
  const { batch, channels: C, length: T, kernel: k, stride: s, padding: p, outDim } = shape;
  const tOut = conv1dOutputLength(shape);
  const st = strides(shape);
  const y = new Float32Array(batch * tOut * outDim);
  for (let b = 0; b < batch; b++) {
    for (let t = 0; t < tOut; t++) {
      for (let o = 0; o < outDim; o++) {
        let acc = bias[o];
        for (let c = 0; c < C; c++) {
          for (let j = 0; j < k; j++) {
            const i = t * s + j - p;
            if (i < 0 || i >= T) continue;
            acc += x[b * st.batch + c * st.channel + i * st.time] * weight[(o * C + c) * k + j];
          }
        }
        y[(b * tOut + t) * outDim + o] = activate(acc, activation);
      }
    }
  }
  return y;
}

export async function prepareConv1d(
  gpu: GpuContext,
  io: { x: Tensor; weight: Weight; bias: Tensor; y: Tensor },
  shape: Conv1dShape,
  options: { workgroupSize?: number; matmul?: MatmulOptions } = {},
): Promise<Dispatch> {
  const kernel = 'conv1d';
  const { batch, channels, length, kernel: k, stride, padding, outDim } = shape;
  for (const [name, v] of Object.entries({ batch, channels, length, kernel: k, stride, outDim })) expectPositiveInt(kernel, name, v);
  if (!Number.isInteger(padding) || padding < 0 || padding >= k) {
    throw new UnsupportedShapeError(`conv1d: padding ${padding} must be an integer in [0, kernel ${k})`);
  }
  const tOut = conv1dOutputLength(shape);
  if (tOut < 1) throw new UnsupportedShapeError(`conv1d: ${length} steps are fewer than one kernel of ${k} (padding ${padding})`);
  const wg = options.workgroupSize ?? DEFAULT_WORKGROUP_SIZE;
  expectWorkgroupSize(gpu, kernel, wg);
  const width = channels * k;
  const rows = batch * tOut;
  expectTensor(gpu, kernel, 'x', io.x, shape.layout === 'channels-first' ? [batch, channels, length] : [batch, length, channels]);
  expectWeight(gpu, kernel, 'weight', io.weight, [outDim, width]);
  expectTensor(gpu, kernel, 'bias', io.bias, [outDim]);
  expectTensor(gpu, kernel, 'y', io.y, [rows, outDim]);
  const cols = gpu.createTensor([rows, width], 'f32', `${kernel}.cols`);
  const st = strides(shape);
  try {
    const im2col = await createDispatch(gpu, {
      label: kernel,
      code: source,
      constants: { WG: wg },
      resources: [io.x, cols],
      params: packParams([
        ['u32', batch],
        ['u32', channels],
        ['u32', length],
        ['u32', tOut],
        ['u32', k],
        ['u32', stride],
        ['u32', padding],
        ['u32', st.batch],
        ['u32', st.channel],
        ['u32', st.time],
      ]),
      grid: linearGrid(gpu, kernel, Math.ceil((rows * width) / wg)),
      cost: { flops: 0, bytes: 8 * rows * width },
    });
    const matmul = await prepareMatmul(
      gpu,
      { x: cols, weight: io.weight, bias: io.bias, y: io.y },
      { M: rows, N: outDim, K: width },
      options.matmul,
    );
    return new DispatchSequence(kernel, [im2col, matmul], () => gpu.release(cols));
  } catch (e) {
    gpu.release(cols);
    throw e;
  }
}
