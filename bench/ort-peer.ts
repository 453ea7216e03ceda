// onnxruntime-web's WebGPU execution provider as the peer for our kernels, in the same page.
// Inputs and outputs stay on ORT's GPUDevice (Tensor.fromGpuBuffer, output buffers passed in as
// fetches), so a timed run is session.run() plus waiting for ORT's queue: its GPU work and its own
// per-run overhead (wasm graph execution, bind groups, uniform uploads), with no uploads or readbacks.
// The wasm binary is served by the same Vite dev server from node_modules (nothing is downloaded).

import * as ort from 'onnxruntime-web/webgpu';
import wasmUrl from 'onnxruntime-web/ort-wasm-simd-threaded.asyncify.wasm?url';

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
  private constructor(readonly device: GPUDevice) {}

  /** Configure ORT (single-threaded wasm, local files) and get the device its WebGPU EP uses. */
  static async start(): Promise<OrtPeer> {
    ort.env.wasm.wasmPaths = { wasm: new URL(wasmUrl, location.href).href };
    ort.env.wasm.numThreads = 1;
    ort.env.logLevel = 'warning';
    // Before the first session this makes ORT create its device; sessions made later use that device.
    const device = await ort.env.webgpu.device;
    if (!device) throw new OrtPeerError('onnxruntime-web did not provide a WebGPU device (ort.env.webgpu.device)');
    return new OrtPeer(device);
  }

  static get version(): string {
    return ort.env.versions?.web ?? 'unknown';
  }

  /** A session on the WebGPU EP only: a node the EP cannot run fails here instead of falling back to wasm. */
  async session(model: Uint8Array): Promise<OrtSession> {
    const session = await ort.InferenceSession.create(model, {
      executionProviders: ['webgpu'],
      preferredOutputLocation: 'gpu-buffer',
      graphOptimizationLevel: 'all',
      extra: { session: { disable_cpu_ep_fallback: '1' } },
    });
    return new OrtSession(this.device, session);
  }
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
