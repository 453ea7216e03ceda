// onnxruntime-web's WebGPU execution provider as the peer for our kernels, in the same page.
// Inputs and outputs stay on ORT's GPUDevice (Tensor.fromGpuBuffer, output buffers passed in as
// fetches), so a timed run is session.run() plus waiting for ORT's queue: its GPU work and its own
// per-run overhead (wasm graph execution, bind groups, uniform uploads), with no uploads or readbacks.
// The wasm binary is served by the same Vite dev server from node_modules (nothing is downloaded).

import * as ort from 'onnxruntime-web/webgpu';
import wasmUrl from 'onnxruntime-web/ort-wasm-simd-threaded.asyncify.wasm?url';
import { matmulModel } from './onnx-model';

/** The WebGPU EP only: a node it cannot run fails session creation instead of falling back to wasm. */
const SESSION_OPTIONS: ort.InferenceSession.SessionOptions = {
  executionProviders: ['webgpu'],
  preferredOutputLocation: 'gpu-buffer',
  graphOptimizationLevel: 'all',
  extra: { session: { disable_cpu_ep_fallback: '1' } },
};

export class OrtPeerError extends Error {
  override readonly name = 'OrtPeerError';
}

export interface PeerIo {
  /** Graph input or output name. */
  name: string;
  buffer: GPUBuffer;
  dims: readonly number[];
}

export class OrtPeer {
  private constructor(
    readonly device: GPUDevice,
    private readonly anchor: ort.InferenceSession,
  ) {}

  /** Configure ORT (single-threaded wasm, local files) and get the device its WebGPU EP made. */
  static async start(): Promise<OrtPeer> {
    ort.env.wasm.wasmPaths = { wasm: new URL(wasmUrl, location.href).href };
    ort.env.wasm.numThreads = 1;
    ort.env.logLevel = 'warning';
    // The asyncify build creates its GPUDevice with the first WebGPU session and only then exposes it
    // (ort.env.webgpu.device resolves to undefined before that), and it drops that device when its last
    // session is released (the next session then gets a new one, and our buffers would belong to the
    // old). So a tiny anchor session stays open until release().
    const anchor = await ort.InferenceSession.create(matmulModel(1, 4, 4), SESSION_OPTIONS);
    const device = await ort.env.webgpu.device;
    if (!device) {
      await anchor.release();
      throw new OrtPeerError('onnxruntime-web made a WebGPU session but ort.env.webgpu.device is empty');
    }
    return new OrtPeer(device, anchor);
  }

  static get version(): string {
    return ort.env.versions?.web ?? 'unknown';
  }

  /** A session for a one-node model, on the WebGPU EP only. */
  async session(model: Uint8Array): Promise<OrtSession> {
    const session = await ort.InferenceSession.create(model, SESSION_OPTIONS);
    return new OrtSession(this.device, session);
  }

  async release(): Promise<void> {
    await this.anchor.release();
  }
}

/**
 * The compute dispatches one call of `run` makes, as "bind group label [workgroups x,y,z]", to show which
 * ORT programs ran (ORT labels its bind groups with the program name; its pipelines are unlabelled).
 * Wraps GPUComputePassEncoder.prototype.setBindGroup / dispatchWorkgroups for that one untimed call
 * only, and restores them before returning.
 */
export async function traceDispatches(run: () => Promise<void>): Promise<string[]> {
  const proto = GPUComputePassEncoder.prototype;
  const { setBindGroup, dispatchWorkgroups } = proto;
  const seen: string[] = [];
  let current = '(no bind group)';
  proto.setBindGroup = function (this: GPUComputePassEncoder, ...args: Parameters<typeof setBindGroup>) {
    if (args[0] === 0) current = args[1]?.label || '(unlabelled)';
    return setBindGroup.apply(this, args);
  } as typeof setBindGroup;
  proto.dispatchWorkgroups = function (this: GPUComputePassEncoder, x: number, y?: number, z?: number) {
    seen.push(`${current} [${x},${y ?? 1},${z ?? 1}]`);
    return dispatchWorkgroups.call(this, x, y, z);
  };
  try {
    await run();
  } finally {
    proto.setBindGroup = setBindGroup;
    proto.dispatchWorkgroups = dispatchWorkgroups;
  }
  return seen;
}

export class OrtSession {
  constructor(
    private readonly device: GPUDevice,
    private readonly session: ort.InferenceSession,
  ) {}

  /** A run with fixed GPU inputs and outputs; it resolves once ORT's queue has finished its work. */
  bind(inputs: readonly PeerIo[], outputs: readonly PeerIo[]): () => Promise<void> {
    const feeds: Record<string, ort.Tensor> = {};
    for (const io of inputs) feeds[io.name] = gpuTensor(io);
    const fetches: Record<string, ort.Tensor> = {};
    for (const io of outputs) fetches[io.name] = gpuTensor(io);
    return async () => {
      await this.session.run(feeds, fetches);
      await this.device.queue.onSubmittedWorkDone();
    };
  }

  async release(): Promise<void> {
    await this.session.release();
  }
}

function gpuTensor(io: PeerIo): ort.Tensor {
  return ort.Tensor.fromGpuBuffer(io.buffer, { dataType: 'float32', dims: io.dims });
}
