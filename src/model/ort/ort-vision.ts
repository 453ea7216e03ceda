// The vision tower and connector as one onnxruntime session (the checkpoint's onnx/vision_encoder.onnx):
// normalised tiles in, image embeddings out ([tiles · image tokens per tile, text hidden]), in batches of
// at most maxBatch tiles. A patch mask (padded patches) becomes the graph's per-pixel mask.

import { UnsupportedShapeError } from '../../errors';
import type { ModelConfig, VisionConfig } from '../config';
import type { VisionInput } from '../vision-encoder';
import type { OrtModule, OrtSession } from './ort-api';

export class OrtVisionEncoder {
  private readonly vision: VisionConfig;

  constructor(
    private readonly ort: OrtModule,
    readonly session: OrtSession,
    readonly config: ModelConfig,
    readonly maxBatch: number,
  ) {
    if (!config.vision) throw new UnsupportedShapeError('OrtVisionEncoder needs a checkpoint with a vision tower');
    this.vision = config.vision;
  }

  /** [numTiles · imageSeqLen, text hidden] f32. */
  async encode(input: VisionInput): Promise<Float32Array> {
    const v = this.vision;
    const S = v.imageSize;
    const tileElems = v.numChannels * S * S;
    if (input.pixels.length !== input.numTiles * tileElems) {
      throw new UnsupportedShapeError(
        `vision input holds ${input.pixels.length} values but ${input.numTiles} tiles of ${v.numChannels}x${S}x${S} need ${input.numTiles * tileElems}`,
      );
    }
    const rowsPerTile = v.imageSeqLen * this.config.text.hiddenSize;
    const out = new Float32Array(input.numTiles * rowsPerTile);
    for (let start = 0; start < input.numTiles; start += this.maxBatch) {
      const n = Math.min(this.maxBatch, input.numTiles - start);
      const mask = new Uint8Array(n * S * S).fill(1);
      if (input.patchMask) this.maskPixels(input.patchMask, start, n, mask);
      const r = await this.session.run({
        pixel_values: new this.ort.Tensor('float32', input.pixels.subarray(start * tileElems, (start + n) * tileElems), [
          1,
          n,
          v.numChannels,
          S,
          S,
        ]),
        pixel_attention_mask: new this.ort.Tensor('bool', mask, [1, n, S, S]),
      });
      out.set(r.image_features!.data as Float32Array, start * rowsPerTile);
    }
    return out;
  }

  private maskPixels(patchMask: Uint8Array, start: number, n: number, mask: Uint8Array): void {
    const v = this.vision;
    const side = v.patchesPerSide;
    const S = v.imageSize;
    for (let t = 0; t < n; t++) {
      for (let py = 0; py < side; py++) {
        for (let px = 0; px < side; px++) {
          if (patchMask[(start + t) * side * side + py * side + px]) continue;
          for (let y = py * v.patchSize; y < (py + 1) * v.patchSize; y++)
            mask.fill(0, t * S * S + y * S + px * v.patchSize, t * S * S + y * S + (px + 1) * v.patchSize);
        }
      }
    }
  }

  destroy(): void {
    void this.session.release?.();
  }
}
