// The peer's side of each comparison: build the model, put the same host data in buffers on
// ORT's device, time session runs, read the output back for the cross-check, free everything.

import { fromHeadMajor, splitQkv, toHeadMajor, toHeadMajorTransposed } from './host-arrays';
import { matmulModel, multiHeadAttentionModel, unfusedAttentionModel } from './onnx-model';
import { traceDispatches, type OrtPeer, type PeerIo } from './ort-peer';
import { emptyBuffer, readFloats, uploadBuffer } from './peer-buffers';
import type { Measured } from './result';
import { gflops, timeRuns, type RepPolicy } from '../harness/timing';

export interface PeerRun {
  measured: Measured;
  out: Float32Array;
}

async function timeGraph(
  peer: OrtPeer,
  label: string,
  model: Uint8Array,
  inputs: readonly { name: string; data: Float32Array; dims: number[] }[],
  output: { name: string; dims: number[] },
  flops: number,
  policy: RepPolicy,
): Promise<PeerRun> {
  const buffers: GPUBuffer[] = [];
  const session = await peer.session(model);
  try {
    const feeds: PeerIo[] = inputs.map((i) => {
      const buffer = uploadBuffer(peer.device, i.data, `ort.${i.name}`);
      buffers.push(buffer);
      return { name: i.name, buffer, dims: i.dims };
    });
    const numOut = output.dims.reduce((a, b) => a * b, 1);
    const outBuffer = emptyBuffer(peer.device, numOut, `ort.${output.name}`);
    buffers.push(outBuffer);
    const run = session.bind(feeds, [{ name: output.name, buffer: outBuffer, dims: output.dims }]);
    const t = await timeRuns(run, policy);
    const dispatches = await traceDispatches(run);
    return {
      measured: { label, ...t, gflops: gflops(flops, t.medianMs), dispatches },
      out: await readFloats(peer.device, outBuffer, numOut),
    };
  } finally {
    await session.release();
    for (const b of buffers) b.destroy();
  }
}

/** ONNX MatMul Y[M, N] = X[M, K] · B[K, N]; `b` is already transposed to [K, N]. */
export function timeOrtMatmul(
  peer: OrtPeer,
  M: number,
  K: number,
  N: number,
  x: Float32Array,
  b: Float32Array,
  policy: RepPolicy,
): Promise<PeerRun> {
  return timeGraph(
    peer,
    'ort:MatMul (webgpu EP)',
    matmulModel(M, K, N),
    [
      { name: 'X', data: x, dims: [M, K] },
      { name: 'B', data: b, dims: [K, N] },
    ],
    { name: 'Y', dims: [M, N] },
    2 * M * N * K,
    policy,
  );
}

export interface AttentionShape {
  batch: number;
  tokens: number;
  heads: number;
  headDim: number;
}

/**
 * com.microsoft MultiHeadAttention on separate Q, K, V [1, tokens, heads * headDim], no mask.
 * `qkv` is our fused [tokens, 3 * heads * headDim] input; the split is not timed. Output as ours.
 */
export function timeOrtMultiHeadAttention(peer: OrtPeer, shape: AttentionShape, qkv: Float32Array, policy: RepPolicy) {
  const { batch, tokens, heads, headDim } = shape;
  const [q, k, v] = splitQkv(qkv, batch * tokens, heads * headDim);
  const dims = [batch, tokens, heads * headDim];
  return timeGraph(
    peer,
    'ort:com.microsoft.MultiHeadAttention (webgpu EP)',
    multiHeadAttentionModel(batch, tokens, heads, headDim),
    [
      { name: 'Q', data: q, dims },
      { name: 'K', data: k, dims },
      { name: 'V', data: v, dims },
    ],
    { name: 'O', dims },
    attentionFlops(shape),
    policy,
  );
}

/**
 * MatMul -> Softmax -> MatMul per head (batch 1), inputs laid out head-major on the host (not timed),
 * Q pre-multiplied by 1/sqrt(headDim). The output is permuted back to our [tokens, heads * headDim].
 */
export async function timeOrtUnfusedAttention(
  peer: OrtPeer,
  shape: AttentionShape,
  qkv: Float32Array,
  policy: RepPolicy,
): Promise<PeerRun> {
  const { tokens, heads, headDim } = shape;
  if (shape.batch !== 1) throw new RangeError(`unfused attention peer: batch ${shape.batch} given, only batch 1 is built`);
  const [q, k, v] = splitQkv(qkv, tokens, heads * headDim);
  const run = await timeGraph(
    peer,
    'ort:MatMul+Softmax+MatMul (webgpu EP)',
    unfusedAttentionModel(tokens, heads, headDim),
    [
      { name: 'Qs', data: toHeadMajor(q, tokens, heads, headDim, 1 / Math.sqrt(headDim)), dims: [heads, tokens, headDim] },
      { name: 'Kt', data: toHeadMajorTransposed(k, tokens, heads, headDim), dims: [heads, headDim, tokens] },
      { name: 'V', data: toHeadMajor(v, tokens, heads, headDim), dims: [heads, tokens, headDim] },
    ],
    { name: 'O', dims: [heads, tokens, headDim] },
    attentionFlops(shape),
    policy,
  );
  return { measured: run.measured, out: fromHeadMajor(run.out, tokens, heads, headDim) };
}

/** 4·T²·D·H: two T×T×D products per head. */
export function attentionFlops(s: AttentionShape): number {
  return 4 * s.batch * s.tokens * s.tokens * s.headDim * s.heads;
}
