// A Qwen-VL vision tower and merger as one onnxruntime session (the checkpoint's onnx/vision_encoder.onnx in
// transformers.js's Qwen-VL layout, scripts/onnx/qwen-vision-onnx.ts): one image's patch rows and grid in,
// its merged rows out ([t·h·w / merge², text hidden]), then each DeepStack level's rows (Qwen3-VL), as the
// WGSL tower gives them (src/encoder/gpu-forward.ts).

import { OnnxGraphMismatchError, UnsupportedShapeError } from '../../errors';
import type { PatchGrid } from '../../processor/smart-resize';
import type { QwenVisionConfig } from '../config';
import type { OrtModule, OrtSession } from './ort-api';

export class OrtQwenVisionEncoder {
  constructor(
    private readonly ort: OrtModule,
    readonly session: OrtSession,
    private readonly vision: QwenVisionConfig,
    private readonly textHidden: number,
  ) {
    const levels = deepstackTaps(vision).length;
    if (levels > 0 && !session.outputNames.includes('deepstack_features')) {
      throw new OnnxGraphMismatchError(
        'vision_encoder.onnx',
        `deepstack_features [${levels}, tokens, ${textHidden}] (an output: the features of vision layers ${deepstackTaps(vision).join(', ')})`,
        'has no such output (the transformers.js layout leaves DeepStack out, so its answers differ from the model)',
      );
    }
  }

  /** The image's rows, then each DeepStack level's: [(1 + levels) · tokens, text hidden] f32. */
  async encode(patches: Float32Array, grid: PatchGrid): Promise<Float32Array> {
    const v = this.vision;
    const width = v.inChannels * v.temporalPatchSize * v.patchSize * v.patchSize;
    const taps = deepstackTaps(v).length;
    const n = grid.t * grid.h * grid.w;
    if (patches.length !== n * width) {
      throw new UnsupportedShapeError(
        `vision input holds ${patches.length} values but a ${grid.t}×${grid.h}×${grid.w} grid of patches of ${width} needs ${n * width}`,
      );
    }
    const r = await this.session.run({
      pixel_values: new this.ort.Tensor('float32', patches, [n, width]),
      image_grid_thw: new this.ort.Tensor('int64', BigInt64Array.of(BigInt(grid.t), BigInt(grid.h), BigInt(grid.w)), [1, 3]),
    });
    const rows = r.image_features!.data as Float32Array;
    const tokens = n / (v.mergeSize * v.mergeSize);
    if (rows.length !== tokens * this.textHidden) {
      throw new UnsupportedShapeError(`vision_encoder.onnx gave ${rows.length} values for ${tokens} tokens of width ${this.textHidden}`);
    }
    if (taps === 0) return rows;
    const levels = r.deepstack_features!.data as Float32Array;
    if (levels.length !== rows.length * taps) {
      throw new UnsupportedShapeError(`vision_encoder.onnx gave ${levels.length} DeepStack values for ${taps} levels of ${tokens} tokens`);
    }
    const all = new Float32Array(rows.length * (1 + taps));
    all.set(rows);
    all.set(levels, rows.length);
    return all;
  }

  destroy(): void {
    void this.session.release?.();
  }
}

const deepstackTaps = (v: QwenVisionConfig): readonly number[] => (v.kind === 'qwen3_vl' ? v.deepstackTaps : []);
