// A step's M-RoPE rows (src/model/runner/flatten.ts): each sequence's [3, n] positions land in its rows of
// the step's [3, T] rows; a sequence without its own (text) takes its KV positions on all three; a step
// where no sequence has any carries none. mropeChunk gives a chunk's rows: the prompt's, then index + delta.

import { describe, expect, it } from 'vitest';
import { InternalError } from '../../src/errors';
import { flattenBatch } from '../../src/model/runner/flatten';
import { mropeChunk, mropePositions } from '../../src/processor/mrope-positions';

const seq = (n: number, start: number, ropePositions?: Uint32Array) => ({
  tokenIds: new Uint32Array(n).fill(7),
  start,
  slots: Uint32Array.from({ length: n }, (_, j) => start + j),
  blockTable: [0],
  ropePositions,
});

describe('M-RoPE rows of a step', () => {
  it("puts each sequence's rows at its rows; text sequences take their KV positions", () => {
    // A: decode at 40 with (t, h, w) = (30, 31, 32); B: 3 text tokens at 5..7.
    const input = flattenBatch([seq(1, 40, Uint32Array.of(30, 31, 32)), seq(3, 5)], 4, 8);
    expect(Array.from(input.positions)).toEqual([40, 5, 6, 7]);
    expect(Array.from(input.ropePositions!)).toEqual([30, 5, 6, 7, 31, 5, 6, 7, 32, 5, 6, 7]);
  });

  it('leaves them out when no sequence has any, and refuses rows of the wrong length', () => {
    expect(flattenBatch([seq(2, 0)], 4, 8).ropePositions).toBeUndefined();
    expect(() => flattenBatch([seq(2, 0, Uint32Array.of(1, 2, 3))], 4, 8)).toThrow(InternalError);
  });

  it("a chunk's rows: the prompt's own, then index + delta", () => {
    // 2 text tokens, a 1 x 4 x 4 image (4 tokens after a 2 x 2 merge; positions 2..3), 1 text token at 4:
    // delta = 5 - 7 = -2.
    const p = mropePositions(7, [{ start: 2, grid: { t: 1, h: 4, w: 4 } }], { mergeSize: 2 });
    expect(p.delta).toBe(-2);
    expect(Array.from(mropeChunk(p, 3, 5))).toEqual([2, 2, 2, 4, 5, 2, 3, 3, 4, 5, 3, 2, 3, 4, 5]);
  });
});
