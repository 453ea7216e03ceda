// The peer's side of each comparison: build the one-node model, put the same host data in buffers on
// ORT's device, time session runs, read the output back for the cross-check, free everything.

import { multiHeadAttentionModel, matmulModel } from './onnx-model';
import type { OrtPeer, PeerIo } from './ort-peer';
import { emptyBuffer, readFloats, uploadBuffer } from './peer-buffers';
import type { Measured } from './result';
import { gflops, timeRuns, type RepPolicy } from './timing';

export interface PeerRun {
  measured: Measured;
  out: Float32Array;
}

async function timeOneNode(
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
    return {
      measured: { label, ...t, gflops: gflops(flops, t.medianMs) },
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
  return timeOneNode(
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

/** com.microsoft MultiHeadAttention on separate Q, K, V [batch, tokens, heads * headDim], no mask. */
export function timeOrtAttention(
  peer: OrtPeer,
  shape: { batch: number; tokens: number; heads: number; headDim: number },
  q: Float32Array,
  k: Float32Array,
  v: Float32Array,
  policy: RepPolicy,
): Promise<PeerRun> {
  const { batch, tokens, heads, headDim } = shape;
  const dims = [batch, tokens, heads * headDim];
  return timeOneNode(
    peer,
    'ort:com.microsoft.MultiHeadAttention (webgpu EP)',
    multiHeadAttentionModel(batch, tokens, heads, headDim),
    [
      { name: 'Q', data: q, dims },
      { name: 'K', data: k, dims },
      { name: 'V', data: v, dims },
    ],
    { name: 'O', dims },
    4 * batch * tokens * tokens * headDim * heads,
    policy,
  );
}
