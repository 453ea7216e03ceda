// What the weight loader needs to know of a GGUF checkpoint (a model .gguf and, for the media tower, its
// mmproj .gguf): the files, their headers, and for each GGUF tensor the Hugging Face tensor it is, so the
// model's weight layout (weight-layout.ts, in HF names) applies to GGUF files unchanged. The family that
// reads the files makes the map (src/families/*/gguf.ts); a ModelSource carrying one is a GGUF checkpoint.

import type { ModelSource } from '../../../io/model-source';
import type { GgufHeader } from './gguf-format';

export interface GgufTensorRef {
  /** The Hugging Face name the layout knows it by (several GGUF tensors may make one: rows, slice). */
  hfName: string;
  /** The GGUF tensor is part `index` of `count` equal parts of the HF tensor's rows (a fused qkv the converter split). */
  rows?: { index: number; count: number };
  /**
   * The GGUF tensor is slice `index` of `count` equal slices along `axis` of the HF tensor (a Conv3d's
   * temporal taps, which llama.cpp stores as two tensors); float types only, put together on the host.
   */
  slice?: { axis: number; index: number; count: number };
  /** The same values in another shape (a conv bias stored as [C, 1]): only the element counts must agree. */
  reshape?: boolean;
  /**
   * llama.cpp's converter reorders the rows of a Llama q_proj/k_proj for its adjacent-pair RoPE (within
   * each head of D rows, HF row j·D/2 + i is stored at row 2i + j); the number of heads to undo it over.
   */
  unpermuteHeads?: number;
}

export interface GgufCheckpointFile {
  /** The file's name in the source. */
  file: string;
  header: GgufHeader;
  /** GGUF tensor name → what it is; tensors the family does not use are absent. */
  tensors: Map<string, GgufTensorRef>;
}

export interface GgufCheckpointPlan {
  files: GgufCheckpointFile[];
}

/** A ModelSource whose weights are GGUF files (its small files are written from their metadata). */
export type GgufModelSource = ModelSource & {
  readonly gguf: GgufCheckpointPlan;
  /** Where the .gguf files are (a folder, a URL's folder, picked files): what a load downloads them from. */
  readonly container: ModelSource;
  /** The model .gguf's and the mmproj .gguf's names in the container. */
  readonly ggufFiles: { readonly model: string; readonly mmproj?: string };
  /** The same checkpoint read from another container (a URL source that stores nothing). */
  in(container: ModelSource): GgufModelSource;
};

export function isGgufSource(source: ModelSource): source is GgufModelSource {
  return (source as Partial<GgufModelSource>).gguf !== undefined;
}

/** HF row of each stored row, for a tensor of `rows` rows reordered over `heads` heads (GgufTensorRef.unpermuteHeads). */
export function unpermutedRow(storedRow: number, rows: number, heads: number): number {
  const D = rows / heads;
  const h = Math.floor(storedRow / D);
  const r = storedRow % D;
  // stored r = 2i + j  →  HF j·D/2 + i
  return h * D + (r % 2) * (D / 2) + (r >> 1);
}
