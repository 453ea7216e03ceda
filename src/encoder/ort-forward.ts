// The media encoder's forward pass on the CPU backend: the checkpoint's onnx/vision_encoder.onnx on
// onnxruntime (src/model/ort/). Its cache identity is a digest of the graph's bytes and names the backend,
// so embeddings computed here and by the WGSL tower (which differ in the last bits) never stand in for
// each other.

import { checksum } from '../cache/content-key';
import { BackendUnsupportedError, InternalError } from '../errors';
import type { ModelSource } from '../io/model-source';
import type { ModelConfig } from '../model/config';
import { createSession, type OrtRuntime } from '../model/ort/ort-api';
import { readOnnxGraph } from '../model/ort/onnx-files';
import { OrtQwenVisionEncoder } from '../model/ort/ort-qwen-vision';
import { OrtVisionEncoder } from '../model/ort/ort-vision';
import type { WeightDtype } from '../model/weights/dtype';
import type { EncoderForward, ForwardInput } from './encoder-forward';
import type { PieceGate } from './piece-gate';

export class OrtEncoderForward implements EncoderForward {
  readonly deviceRecoveries = 0;
  readonly adapter = undefined;

  private constructor(
    private readonly encoder: OrtVisionEncoder | OrtQwenVisionEncoder,
    readonly config: ModelConfig,
    readonly backend: 'cpu' | 'wasm',
    readonly weightsDigest: string,
    readonly dtype: string,
  ) {}

  static async create(
    rt: OrtRuntime,
    source: ModelSource,
    config: ModelConfig,
    options: { dtype?: WeightDtype; maxBatch?: number; why?: string },
  ): Promise<OrtEncoderForward> {
    const dtype = options.dtype ?? 'f32';
    if (!config.vision && !config.qwenVision) {
      throw new BackendUnsupportedError(rt.provider, `${config.modelType} (audio) checkpoints`, "use device: 'webgpu'");
    }
    const g = await readOnnxGraph(source, 'vision_encoder', dtype, options.why ?? "device 'cpu' was asked for");
    // The graph's checksum, then its data files' (one space after the graph's even when it has none).
    const [graphSum, ...dataSums] = await Promise.all([g.model, ...(g.externalData ?? []).map((d) => d.data)].map((b) => checksum(b)));
    const digest = await checksum(new TextEncoder().encode(`${graphSum} ${dataSums.join(' ')}`));
    const session = await createSession(rt, g.model, g.externalData);
    const encoder = config.qwenVision
      ? new OrtQwenVisionEncoder(rt.ort, session, config.qwenVision, config.text.hiddenSize)
      : new OrtVisionEncoder(rt.ort, session, config, options.maxBatch ?? 4);
    return new OrtEncoderForward(encoder, config, rt.provider, digest, `onnx-${dtype}@${rt.provider}`);
  }

  async run(input: ForwardInput, gate: PieceGate): Promise<Float32Array> {
    if (input.kind === 'chunks') throw new BackendUnsupportedError(this.backend, 'audio', "use device: 'webgpu'");
    const encoder = this.encoder;
    // One piece per pass: onnxruntime runs it in its own threads, so it cannot be cut between model steps.
    await gate.before();
    const t0 = performance.now();
    try {
      if (input.kind === 'patches') {
        if (!(encoder instanceof OrtQwenVisionEncoder))
          throw new InternalError(`a ${this.config.modelType} encoder was given Qwen-VL patches`);
        return await encoder.encode(input.patches, input.grid);
      }
      if (!(encoder instanceof OrtVisionEncoder)) throw new InternalError(`a ${this.config.modelType} encoder was given image tiles`);
      return await encoder.encode({ pixels: input.pixels, numTiles: input.numTiles });
    } finally {
      gate.after(performance.now() - t0);
    }
  }

  destroy(): void {
    this.encoder.destroy();
  }
}
