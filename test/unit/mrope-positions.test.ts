// M-RoPE positions (src/processor/mrope-positions.ts) against test/reference/mrope_positions.py, which walks
// the token ids as HF Qwen2.5-VL's get_rope_index does: text only, images mid-prompt, first and last,
// videos at 1, 2/3 and 0.5 s per grid (float32 time steps), Qwen3-VL's plain frame index, merge 1.

import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InvalidMessageError } from '../../src/errors';
import { mropePositions, type VisionRun } from '../../src/processor/mrope-positions';

interface Case {
  name: string;
  numTokens: number;
  mergeSize: number;
  tokensPerSecond: number | null;
  spans: Array<VisionRun & { kind: 'image' | 'video' }>;
  positions: [number[], number[], number[]];
  delta: number;
}

const { cases } = JSON.parse(readFileSync(resolve(import.meta.dirname, '../fixtures/goldens/mrope-positions.json'), 'utf8')) as {
  cases: Case[];
};

describe('M-RoPE positions', () => {
  it.each(cases.map((c) => [c.name, c] as const))('%s: the reference positions and delta', (_name, c) => {
    const runs = c.spans.map(({ start, grid, secondsPerGrid, kind }) => ({
      start,
      grid,
      secondsPerGrid: kind === 'video' ? secondsPerGrid : undefined,
    }));
    const got = mropePositions(c.numTokens, runs, { mergeSize: c.mergeSize, tokensPerSecond: c.tokensPerSecond ?? undefined });
    expect(got.rows.map((r) => Array.from(r))).toEqual(c.positions);
    expect(got.delta).toBe(c.delta);
  });

  it('runs that overlap, pass the end or do not merge are named errors', () => {
    const o = { mergeSize: 2, tokensPerSecond: 2 };
    const grid = { t: 1, h: 4, w: 4 };
    expect(() => mropePositions(10, [{ start: 8, grid }], o)).toThrow(InvalidMessageError);
    expect(() =>
      mropePositions(
        20,
        [
          { start: 4, grid },
          { start: 6, grid },
        ],
        o,
      ),
    ).toThrow(/overlaps/);
    expect(() => mropePositions(20, [{ start: 0, grid: { t: 1, h: 3, w: 4 } }], o)).toThrow(/merge blocks/);
  });
});
