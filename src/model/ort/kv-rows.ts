// Where the CPU backend's K/V lives: onnxruntime's `present` tensors, kept as they come out of the decoder
// and fed back as the next step's `past`. A step's rows run as one batch; a batch keeps its rows' K/V side
// by side, each row left-padded to the batch's longest (the padding masked out, attention_mask 0):
//
//   KvRows, 3 rows, padded 6:   row 0  pad 2   [ 0 0 | k k k k ]      a row's tokens sit at [pad, padded)
//                               row 1  pad 0   [ k k k k k k ]
//                               row 2  pad 5   [ 0 0 0 0 0 | k ]
//
// The decoder appends one position per new token to every row, so the batch's `present` is the same rows
// with the same pads, one longer: a batch that runs again with the same rows costs no copy (gather() is only
// needed when the rows change: a sequence joins, leaves, or prefills alone).

import type { TextConfig } from '../config';
import type { OrtModule, OrtTensor } from './ort-api';

export interface KvRows {
  /** Per layer, key then value: [rows, kv heads, padded, head_dim] f32. */
  tensors: OrtTensor[];
  /** Positions along the token axis (the longest row's tokens). */
  padded: number;
  /** Left padding of each row. */
  pads: readonly number[];
}

/** One row of a KvRows: where a sequence's K/V is. */
export interface KvRef {
  rows: KvRows;
  row: number;
}

/** Tokens a row holds. */
export function rowLength(ref: KvRef): number {
  return ref.rows.padded - ref.rows.pads[ref.row]!;
}

/** Shapes and the tensor constructor the layout needs. */
export class KvLayout {
  constructor(
    private readonly ort: OrtModule,
    readonly text: TextConfig,
  ) {}

  /** Tensors per sequence (layers × key/value). */
  get numTensors(): number {
    return 2 * this.text.numLayers;
  }

  /** `rows` empty rows (a prefill from position 0). */
  empty(rows: number): KvRows {
    const { numKvHeads: h, headDim: d } = this.text;
    const tensors = Array.from({ length: this.numTensors }, () => new this.ort.Tensor('float32', new Float32Array(0), [rows, h, 0, d]));
    return { tensors, padded: 0, pads: new Array<number>(rows).fill(0) };
  }

  /**
   * The rows `refs` as one new batch, in that order, left-padded to the longest. A single row already
   * unpadded is returned as it is (no copy).
   */
  gather(refs: readonly KvRef[]): KvRows {
    if (refs.length === 1) {
      const only = refs[0]!;
      if (only.rows.pads.length === 1 && only.rows.pads[0] === 0) return only.rows;
    }
    const { numKvHeads: h, headDim: d } = this.text;
    const lengths = refs.map(rowLength);
    const padded = Math.max(0, ...lengths);
    const b = refs.length;
    const tensors = Array.from({ length: this.numTensors }, (_, k) => {
      const data = new Float32Array(b * h * padded * d);
      refs.forEach((ref, i) => {
        const len = lengths[i]!;
        if (len === 0) return;
        const src = ref.rows.tensors[k]!.data as Float32Array;
        const P = ref.rows.padded;
        const from = ref.rows.pads[ref.row]!;
        for (let head = 0; head < h; head++) {
          const at = ((ref.row * h + head) * P + from) * d;
          data.set(src.subarray(at, at + len * d), ((i * h + head) * padded + (padded - len)) * d);
        }
      });
      return new this.ort.Tensor('float32', data, [b, h, padded, d]);
    });
    return { tensors, padded, pads: lengths.map((len) => padded - len) };
  }

  /** Tokens [start, start + count) of a row, per tensor: [kv heads, count, head_dim] each (a copy). */
  slice(ref: KvRef, start: number, count: number): Float32Array[] {
    const { numKvHeads: h, headDim: d } = this.text;
    const P = ref.rows.padded;
    const from = ref.rows.pads[ref.row]! + start;
    return ref.rows.tensors.map((t) => {
      const src = t.data as Float32Array;
      const out = new Float32Array(h * count * d);
      for (let head = 0; head < h; head++) {
        const at = ((ref.row * h + head) * P + from) * d;
        out.set(src.subarray(at, at + count * d), head * count * d);
      }
      return out;
    });
  }

  /** One unpadded row from consecutive pieces (each as slice() returns them, [kv heads, n_j, head_dim]). */
  concat(pieces: ReadonlyArray<{ data: readonly Float32Array[]; count: number }>): KvRows {
    const { numKvHeads: h, headDim: d } = this.text;
    const total = pieces.reduce((a, p) => a + p.count, 0);
    const tensors = Array.from({ length: this.numTensors }, (_, k) => {
      const data = new Float32Array(h * total * d);
      let at = 0;
      for (const p of pieces) {
        const src = p.data[k]!;
        for (let head = 0; head < h; head++) data.set(src.subarray(head * p.count * d, (head + 1) * p.count * d), (head * total + at) * d);
        at += p.count;
      }
      return new this.ort.Tensor('float32', data, [1, h, total, d]);
    });
    return { tensors, padded: total, pads: [0] };
  }

  /** Bytes of a batch's tensors. */
  bytes(rows: KvRows): number {
    return rows.tensors.reduce((a, t) => a + (t.data as Float32Array).byteLength, 0);
  }
}
