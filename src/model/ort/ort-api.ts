// The part of onnxruntime's JavaScript API the CPU backend uses, written out structurally so that Tessera's
// types do not depend on either package: onnxruntime-node (Node, CPU execution provider) and
// onnxruntime-web (browsers, WebAssembly) both satisfy it (their shared onnxruntime-common API).

type OrtTensorType = 'float32' | 'int64' | 'bool';

export interface OrtTensor {
  readonly type: string;
  readonly dims: readonly number[];
  readonly data: unknown;
  dispose?(): void;
}

export interface OrtSessionOptions {
  executionProviders?: readonly string[];
  graphOptimizationLevel?: 'disabled' | 'basic' | 'extended' | 'all';
  intraOpNumThreads?: number;
  /** Weights kept beside a graph (`<file>_data`), by the path the graph names. */
  externalData?: ReadonlyArray<{ path: string; data: Uint8Array }>;
}

export interface OrtSession {
  readonly inputNames: readonly string[];
  readonly outputNames: readonly string[];
  run(feeds: Record<string, OrtTensor>): Promise<Record<string, OrtTensor>>;
  release?(): Promise<void>;
}

export interface OrtModule {
  InferenceSession: { create(model: Uint8Array, options?: OrtSessionOptions): Promise<OrtSession> };
  Tensor: new (type: OrtTensorType, data: Float32Array | BigInt64Array | Uint8Array, dims: readonly number[]) => OrtTensor;
}

/** Which onnxruntime runs the graphs, and on what ('cpu': onnxruntime-node; 'wasm': onnxruntime-web). */
export interface OrtRuntime {
  ort: OrtModule;
  provider: 'cpu' | 'wasm';
  /** Threads per session (undefined: onnxruntime's default, every core). */
  threads?: number;
  /** How it runs, for engine.stats().device.reason ('onnxruntime CPU', 'onnxruntime WebAssembly, 2 threads'). */
  label?: string;
}

export async function createSession(
  rt: OrtRuntime,
  model: Uint8Array,
  externalData?: OrtSessionOptions['externalData'],
): Promise<OrtSession> {
  return rt.ort.InferenceSession.create(model, {
    executionProviders: [rt.provider],
    graphOptimizationLevel: 'all',
    ...(rt.threads ? { intraOpNumThreads: rt.threads } : {}),
    ...(externalData && externalData.length > 0 ? { externalData } : {}),
  });
}
