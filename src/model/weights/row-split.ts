// Weights larger than one binding. A storage binding is at most the device's maxStorageBufferBindingSize
// (WebGPU's default is 128 MiB; many laptops, integrated GPUs and phones bind 128 MiB-2 GiB), while a real
// checkpoint's token embedding and LM head are larger: Qwen2.5-VL-3B's [151936, 2048] is 1.16 GiB in f32.
// Such a matrix is allocated as parts of whole rows, each its own buffer within the limit:
//
//   W [N, K] ─► part 0: rows [0, r)   part 1: rows [r, 2r)   ...   part n: rows [n r, N)
//
// The kernels that read such a weight take one part at a time: the embedding gather writes the tokens whose
// ids fall in a part (kernels/embedding-gather.ts `part`), the LM head matmul writes a part's columns of the
// logits (kernels/matmul.ts `yColumns`). Loading writes a checkpoint tensor's rows into the parts they fall
// in (rowPieces). Only the weights the layout marks `rowSplit` may be split; any other weight over the limit
// is a DeviceLimitError at load. The same parts hold a fused weight whose checkpoint tensors come in
// different formats (the layout's `formatParts`: a GGUF qkv with a Q6_K v beside Q4_K q and k), a part of
// one format each; the language model reads its qkv by parts, each part's product writing its columns.

import { DeviceLimitError } from '../../errors';
import { packedLayout, type Weight, type WeightFormat } from '../../kernels/weight-format';
import type { StoredEntry } from './stored-copy';

/** Rows [first, first + rows) of a split weight, in a buffer of their own. */
export interface RowPart {
  first: number;
  rows: number;
  weight: Weight;
}

export interface RowSplitWeight {
  readonly rowSplit: true;
  readonly key: string;
  /** Logical [N, K]. */
  readonly shape: readonly [number, number];
  /** In order, covering [0, N); each in its own format (one format for a weight split by size). */
  readonly parts: readonly RowPart[];
}

/** A GPU weight as loaded: whole, or split by rows. */
export type LoadedWeight = Weight | RowSplitWeight;

export function isRowSplit(w: LoadedWeight): w is RowSplitWeight {
  return (w as RowSplitWeight).rowSplit === true;
}

/** A loaded weight's parts: one part for a whole weight. */
export function rowPartsOf(w: LoadedWeight, shape: readonly number[]): readonly RowPart[] {
  return isRowSplit(w) ? w.parts : [{ first: 0, rows: shape[0], weight: w }];
}

/** Bytes per row of W [N, K] in `format`: its data, and its scales (q8/q4). */
function rowBytes(format: WeightFormat, K: number): { data: number; scales: number } {
  const l = packedLayout(format, 1, K);
  return { data: l.rowWords * 4, scales: l.scaleWords * 4 };
}

/**
 * Rows per part so that each part's data and scales fit in `maxBinding` bytes (whole parts are multiples of
 * 16 bytes, as buffers are sized), or undefined when the whole weight fits. A row larger than the limit is a
 * DeviceLimitError: no split helps.
 */
export function rowsPerPart(key: string, format: WeightFormat, shape: readonly number[], maxBinding: number): number | undefined {
  if (shape.length !== 2) return undefined;
  const [N, K] = shape;
  const row = rowBytes(format, K);
  const pad = (bytes: number) => Math.ceil(bytes / 16) * 16;
  if (pad(row.data * N) <= maxBinding && pad(row.scales * N) <= maxBinding) return undefined;
  const largest = Math.max(row.data, row.scales);
  const rows = Math.floor((maxBinding - 16) / largest);
  if (rows < 1) throw new DeviceLimitError(`weight ${key}`, 'maxStorageBufferBindingSize (bytes of one row)', largest, maxBinding);
  return Math.min(rows, N);
}

/** One part's share of a stored entry: its rows relative to the part, and where they start in the entry. */
export interface RowPiece {
  weight: Weight;
  entry: StoredEntry;
  /** The piece's first unit inside the entry (units: rows, or elements for f32 entries). */
  from: number;
}

/**
 * The parts an entry's rows fall in. An entry counts its rows in units of entry.K values (f32 entries use
 * K = 1: units are elements, weights/gpu-weights.ts entryFor), a part in rows of the weight's K.
 */
export function rowPieces(target: RowSplitWeight, entry: StoredEntry): RowPiece[] {
  const unitsPerRow = target.shape[1] / entry.K;
  const perUnit = { data: entry.dataBytes / entry.rows, scales: entry.scaleBytes / entry.rows };
  const pieces: RowPiece[] = [];
  for (const part of target.parts) {
    const start = part.first * unitsPerRow;
    const end = (part.first + part.rows) * unitsPerRow;
    const a = Math.max(start, entry.rowOffset);
    const b = Math.min(end, entry.rowOffset + entry.rows);
    if (a >= b) continue;
    const rows = b - a;
    pieces.push({
      weight: part.weight,
      entry: { ...entry, rowOffset: a - start, rows, dataBytes: perUnit.data * rows, scaleBytes: perUnit.scales * rows },
      from: a - entry.rowOffset,
    });
  }
  return pieces;
}
