// The figures one `bench:kernels` run produces. The page fills a BenchResult and hands it to the Node
// runner (window.__benchResult), which prints it as a table and as one JSON line. Types only.

import type { SampleFigures } from '../sample/sample-runs';
import type { Measured } from '../harness/timing';

export type { Measured };

/** A run that did not happen; the message says why. */
export interface Skipped {
  label: string;
  skipped: string;
}

export interface MatmulFigures {
  M: number;
  K: number;
  N: number;
  flops: number;
  /** Our kernel with the device's variant. */
  ours: Measured;
  /** Our kernel forced to the other variant. */
  other: Measured;
  ort: Measured | Skipped;
  /** ours GFLOP/s divided by ORT GFLOP/s (> 1: ours is faster); null when ORT did not run. */
  oursOverOrt: number | null;
  /** Output rows compared with the CPU reference. */
  checkedRows: number[];
}

export interface AttentionPeerFigures {
  peer: Measured | Skipped;
  /** ours GFLOP/s divided by the peer's (> 1: ours is faster); null when the peer did not run. */
  oursOverPeer: number | null;
}

export interface AttentionFigures {
  batch: number;
  tokens: number;
  heads: number;
  headDim: number;
  flops: number;
  ours: Measured;
  peers: AttentionPeerFigures[];
}

export interface CopyFigures {
  sizeBytes: number;
  /** Bytes read plus bytes written per run. */
  bytesMoved: number;
  ours: Measured;
}

/** Our matmul with one weight dtype and one kernel variant. */
export interface DtypeMatmulFigures {
  M: number;
  K: number;
  N: number;
  format: string;
  variant: string;
  /** Bytes of W in this format (data + scales): what one run must read at least once. */
  weightBytes: number;
  /** gflops, and gbps = weightBytes / time (the effective weight bandwidth). */
  measured: Measured;
}

/** vit-attention at one head size with one plan ('matmuls', or 'stream' with its head code). */
export interface DtypeAttentionFigures {
  batch: number;
  tokens: number;
  heads: number;
  headDim: number;
  plan: string;
  /** Pipeline creation (compilation) time, ms. */
  compileMs: number;
  /** Global memory the plan needs besides qkv and out (the matmuls plan's score block; 0 for tiled and stream). */
  scratchBytes: number;
  measured: Measured;
}

export interface BenchResult {
  bench: 'kernels';
  only?: undefined;
  adapter: string;
  kernelVariant: string;
  otherVariant: string;
  userAgent: string;
  ort: {
    version: string;
    executionProvider: string;
    /** Which of ORT's builds and settings ran, and what its timings cover. */
    notes: string[];
  };
  /** What every timing covers. */
  timed: string;
  /** How outputs were checked against the CPU reference (maxAbsErr). */
  checked: string;
  matmul: MatmulFigures[];
  attention: AttentionFigures;
  copy: CopyFigures;
  /** Matmul per weight dtype and variant: the ViT shapes and decode rows. */
  dtypes: { vit: DtypeMatmulFigures[]; decode: DtypeMatmulFigures[] };
  /** vit-attention at head sizes 64, 72, 128, unrolled and loop head code. */
  headDims: DtypeAttentionFigures[];
  /** The sampler at vocab 49280: each mode's argmax + sample time, and the sampler's own share. */
  sample: SampleFigures[];
  /** Seconds from page start to result, as measured in the page. */
  pageSeconds: number;
}

/** `--only=sample`: the sampler section alone. */
export interface SampleOnlyResult {
  bench: 'kernels';
  only: 'sample';
  adapter: string;
  userAgent: string;
  sample: SampleFigures[];
  pageSeconds: number;
}

export type KernelsBenchResult = BenchResult | SampleOnlyResult;

export function isSkipped(m: Measured | Skipped): m is Skipped {
  return (m as Skipped).skipped !== undefined;
}
