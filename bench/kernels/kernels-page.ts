// Browser side of `npm run bench:kernels`: times our kernels and onnxruntime-web's WebGPU EP on the same
// data in this page, logs progress to the console (the runner streams it), and leaves the figures in
// window.__benchResult (or a message in window.__benchError). `?quick` runs a small subset for development;
// `?only=sample` runs the sampler section alone (no ORT).

import { adapterName, type KernelVariant } from '../../src/gpu/adapter-info';
import { createBrowserGpuContext } from '../../src/gpu/browser';
import type { GpuContext } from '../../src/gpu/context';
import { randomUniform } from '../../src/selfcheck/random';
import { maxAbsDiff, transpose } from './host-arrays';
import { OrtPeer } from './ort-peer';
import {
  attentionFlops,
  timeOrtMatmul,
  timeOrtMultiHeadAttention,
  timeOrtUnfusedAttention,
  type AttentionShape,
  type PeerRun,
} from './ort-runs';
import { benchDtypeMatmul, benchHeadDims, DTYPE_DECODE_SHAPES, DTYPE_VIT_SHAPES, HEAD_DIM_SHAPES } from './kernels-dtypes';
import { ourMatmul, timeOurAttention, timeOurCopy } from './ours';
import { attentionReference, matmulCheck } from './reference-check';
import type {
  AttentionFigures,
  CopyFigures,
  DtypeMatmulFigures,
  KernelsBenchResult,
  MatmulFigures,
  Measured,
  SampleOnlyResult,
  Skipped,
} from './result';
import { benchSample } from '../sample/sample-runs';
import { FAST_POLICY, SLOW_POLICY, type RepPolicy } from '../harness/timing';

declare global {
  interface Window {
    __benchResult?: KernelsBenchResult;
    __benchError?: string;
  }
}

/** SmolVLM's shapes, M×K×N: the vision tower's qkv/out (768), MLP up and down, and decode rows. */
const MATMUL_SHAPES: readonly (readonly [number, number, number])[] = [
  [1024, 768, 768],
  [1024, 768, 3072],
  [1024, 3072, 768],
  [1, 576, 1536],
  [1, 576, 49280],
];
const QUICK_MATMUL_SHAPES: readonly (readonly [number, number, number])[] = [
  [256, 768, 768],
  [1, 576, 1536],
];
const ATTENTION = { batch: 1, tokens: 1024, heads: 12, headDim: 64 };
const COPY_BYTES = 64 * 1024 * 1024;

const TIMED =
  'wall clock per run, median of the timed reps after one warm-up: ours = encode 1 compute pass + submit + ' +
  'queue.onSubmittedWorkDone(); ORT = session.run() with GPU-buffer inputs and pre-allocated GPU-buffer ' +
  "outputs + onSubmittedWorkDone() on ORT's device. No uploads or readbacks are timed.";

const CHECKED =
  'maxAbsErr = largest |output - float64 CPU reference| (src/kernels reference functions): matmul over up to 4 ' +
  'sampled rows of y (checkedRows), attention over every output. Inputs are uniform in [-1, 1).';

function log(message: string): void {
  console.log(`[bench] ${message}`);
}

function describe(m: Measured): string {
  const rate = m.gflops !== undefined ? `${m.gflops.toFixed(3)} GFLOP/s` : `${(m.gbps ?? 0).toFixed(2)} GB/s`;
  const err = m.maxAbsErr !== undefined ? `, max|err| ${m.maxAbsErr.toExponential(1)}` : '';
  const ran = m.dispatches ? `; dispatches: ${m.dispatches.join(', ')}` : '';
  return `${m.label}: ${m.medianMs.toFixed(1)} ms median of ${m.reps} (warm-up ${m.warmupMs.toFixed(0)} ms), ${rate}${err}${ran}`;
}

function errorText(e: unknown): string {
  return e instanceof Error ? `${e.name}: ${e.message}` : String(e);
}

async function benchMatmul(
  gpu: GpuContext,
  peer: OrtPeer | Skipped,
  [M, K, N]: readonly [number, number, number],
  otherVariant: KernelVariant,
  seed: number,
): Promise<MatmulFigures> {
  const name = `matmul ${M}×${K}×${N}`;
  const x = randomUniform(M * K, seed);
  const w = randomUniform(N * K, seed + 1);
  const check = matmulCheck(x, w, M, K, N);
  const mm = ourMatmul(gpu, { M, N, K }, x, w);
  let other: Measured;
  let ours: Measured;
  try {
    other = await mm.time(otherVariant, SLOW_POLICY);
    other.maxAbsErr = check.maxAbsErr(await mm.readOutput());
    log(`${name} ours, other variant: ${describe(other)}`);
    ours = await mm.time(gpu.kernelVariant, FAST_POLICY);
    ours.maxAbsErr = check.maxAbsErr(await mm.readOutput());
    log(`${name} ours: ${describe(ours)}`);
  } finally {
    mm.release();
  }
  const figures: MatmulFigures = {
    M,
    K,
    N,
    flops: 2 * M * N * K,
    ours,
    other,
    oursOverOrt: null,
    checkedRows: check.rows,
    ort: { label: 'ort:MatMul', skipped: 'skipped' in peer ? peer.skipped : 'not run' },
  };
  if ('skipped' in peer) return figures;
  try {
    const run = await timeOrtMatmul(peer, M, K, N, x, transpose(w, N, K), SLOW_POLICY);
    run.measured.maxAbsErr = check.maxAbsErr(run.out);
    log(`${name} ${describe(run.measured)}`);
    figures.ort = run.measured;
    figures.oursOverOrt = ours.gflops! / run.measured.gflops!;
  } catch (e) {
    figures.ort = { label: 'ort:MatMul', skipped: `ORT failed: ${errorText(e)}` };
    log(`${name} ${figures.ort.skipped}`);
  }
  return figures;
}

type AttentionPeerRun = (peer: OrtPeer, shape: AttentionShape, qkv: Float32Array, policy: RepPolicy) => Promise<PeerRun>;

const ATTENTION_PEERS: readonly [string, AttentionPeerRun][] = [
  ['ort:com.microsoft.MultiHeadAttention', timeOrtMultiHeadAttention],
  ['ort:MatMul+Softmax+MatMul', timeOrtUnfusedAttention],
];

async function benchAttention(gpu: GpuContext, peer: OrtPeer | Skipped, tokens: number): Promise<AttentionFigures> {
  const shape = { ...ATTENTION, tokens };
  const qkv = randomUniform(tokens * 3 * shape.heads * shape.headDim, 7);
  const ref = attentionReference(qkv, shape);
  const ours = await timeOurAttention(gpu, shape, qkv, FAST_POLICY);
  ours.measured.maxAbsErr = maxAbsDiff(ours.out, ref);
  log(`vit-attention T=${tokens} ours: ${describe(ours.measured)}`);
  const figures: AttentionFigures = { ...shape, flops: attentionFlops(shape), ours: ours.measured, peers: [] };
  for (const [label, runPeer] of ATTENTION_PEERS) {
    if ('skipped' in peer) {
      figures.peers.push({ peer: { label, skipped: peer.skipped }, oursOverPeer: null });
      continue;
    }
    try {
      const run = await runPeer(peer, shape, qkv, SLOW_POLICY);
      run.measured.maxAbsErr = maxAbsDiff(run.out, ref);
      log(`vit-attention T=${tokens} ${describe(run.measured)}`);
      figures.peers.push({ peer: run.measured, oursOverPeer: ours.measured.gflops! / run.measured.gflops! });
    } catch (e) {
      figures.peers.push({ peer: { label, skipped: `failed: ${errorText(e)}` }, oursOverPeer: null });
      log(`vit-attention T=${tokens} ${label} failed: ${errorText(e)}`);
    }
  }
  return figures;
}

async function benchCopy(gpu: GpuContext, sizeBytes: number): Promise<CopyFigures> {
  const ours = await timeOurCopy(gpu, sizeBytes, FAST_POLICY);
  log(`copy ${sizeBytes / 2 ** 20} MiB ${describe(ours)}`);
  return { sizeBytes, bytesMoved: 2 * sizeBytes, ours };
}

async function sampleOnly(gpu: GpuContext, started: number): Promise<SampleOnlyResult> {
  try {
    const sample = await benchSample(gpu, { logits: ['flat', 'peaked'], log });
    return {
      bench: 'kernels',
      only: 'sample',
      adapter: adapterName(gpu.adapter),
      userAgent: navigator.userAgent,
      sample,
      pageSeconds: (performance.now() - started) / 1000,
    };
  } finally {
    gpu.destroy();
  }
}

async function main(): Promise<KernelsBenchResult> {
  const started = performance.now();
  const search = new URLSearchParams(location.search);
  const quick = search.has('quick');
  const gpu = await createBrowserGpuContext();
  if (search.get('only') === 'sample') {
    log(`adapter: ${adapterName(gpu.adapter)}; sampler only`);
    return sampleOnly(gpu, started);
  }
  const otherVariant: KernelVariant = gpu.kernelVariant === 'register' ? 'workgroup' : 'register';
  log(`adapter: ${adapterName(gpu.adapter)}; kernel variant: ${gpu.kernelVariant}${quick ? ' (quick subset)' : ''}`);
  let peer: OrtPeer | Skipped;
  try {
    peer = await OrtPeer.start();
    log(`onnxruntime-web ${OrtPeer.version}: WebGPU device ready`);
  } catch (e) {
    peer = { label: 'onnxruntime-web', skipped: `onnxruntime-web did not start: ${errorText(e)}` };
    log(peer.skipped);
  }
  try {
    const copy = await benchCopy(gpu, quick ? COPY_BYTES / 4 : COPY_BYTES);
    const matmul: MatmulFigures[] = [];
    let seed = 100;
    for (const shape of quick ? QUICK_MATMUL_SHAPES : MATMUL_SHAPES) {
      matmul.push(await benchMatmul(gpu, peer, shape, otherVariant, (seed += 10)));
    }
    const attention = await benchAttention(gpu, peer, quick ? 256 : ATTENTION.tokens);
    // Weight dtypes: every weight dtype in both variants, and other head sizes.
    const variants = [gpu.kernelVariant, otherVariant];
    const policyFor = (v: KernelVariant) => (v === gpu.kernelVariant ? FAST_POLICY : SLOW_POLICY);
    const dtypes = { vit: [] as DtypeMatmulFigures[], decode: [] as DtypeMatmulFigures[] };
    for (const shape of quick ? [[256, 768, 768] as const] : DTYPE_VIT_SHAPES) {
      dtypes.vit.push(...(await benchDtypeMatmul(gpu, shape, variants, policyFor, log)));
    }
    for (const shape of quick ? [[1, 576, 3072] as const] : DTYPE_DECODE_SHAPES) {
      dtypes.decode.push(...(await benchDtypeMatmul(gpu, shape, variants, policyFor, log)));
    }
    const headDims = await benchHeadDims(
      gpu,
      SLOW_POLICY,
      log,
      quick ? [{ batch: 1, tokens: 196, heads: 4, headDim: 72 }] : HEAD_DIM_SHAPES,
    );
    const sample = await benchSample(gpu, { logits: quick ? ['flat'] : ['flat', 'peaked'], log });
    return {
      bench: 'kernels',
      adapter: adapterName(gpu.adapter),
      kernelVariant: gpu.kernelVariant,
      otherVariant,
      userAgent: navigator.userAgent,
      ort: {
        version: OrtPeer.version,
        executionProvider: 'webgpu',
        notes: [
          'onnxruntime-web/webgpu bundle (ort-wasm-simd-threaded.asyncify.wasm, served locally), numThreads 1',
          'sessions: executionProviders [webgpu], graphOptimizationLevel all, session.disable_cpu_ep_fallback 1',
          'MatMul B is a graph input [K, N] (= Wᵀ), not an initializer',
          'MatMul+Softmax+MatMul: Q (pre-scaled by 1/sqrt(D)), Kᵀ, V as head-major graph inputs; layout work untimed',
        ],
      },
      timed: TIMED,
      checked: CHECKED,
      matmul,
      attention,
      copy,
      dtypes,
      headDims,
      sample,
      pageSeconds: (performance.now() - started) / 1000,
    };
  } finally {
    if (!('skipped' in peer)) await peer.release();
    gpu.destroy();
  }
}

main().then(
  (result) => {
    window.__benchResult = result;
  },
  (e: unknown) => {
    window.__benchError = e instanceof Error ? `${e.name}: ${e.message}\n${e.stack ?? ''}` : String(e);
  },
);
