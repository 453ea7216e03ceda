// M-RoPE positions of a Qwen-VL prompt (HF Qwen2.5-VL `get_rope_index`; Qwen3-VL's without the time
// scale): three rows (t, h, w) per token. A text stretch counts on from the largest position so far plus
// one, the same on all three rows. A vision run, whose LM grid is (t, h / merge, w / merge), is offset by
// where its stretch starts: h and w are the token's row and column, and t is the frame group's index. In
// Qwen2.5-VL, t is int(index × seconds per grid × tokens_per_second) computed in float32 as torch does,
// and an image's seconds per grid is 0. After the prompt, token i sits at i + delta on all three rows.
// test/reference/mrope_positions.py writes the reference the unit test reads.

import { InvalidMessageError } from '../errors';
import type { PatchGrid } from './smart-resize';

/** One image or video: the index of its first placeholder token and its patch grid. */
export interface VisionRun {
  start: number;
  grid: PatchGrid;
  /** A video's seconds per temporal grid step (temporal patch / fps); undefined for an image. */
  secondsPerGrid?: number;
}

export interface MropeOptions {
  mergeSize: number;
  /** Qwen2.5-VL's vision_config.tokens_per_second; undefined: t is the grid index (Qwen3-VL). */
  tokensPerSecond?: number;
}

export interface MropePositions {
  /** [t, h, w], each one position per token. */
  rows: [Int32Array, Int32Array, Int32Array];
  /** The next token's position minus its index (0 for text alone, negative after images). */
  delta: number;
}

export function mropePositions(numTokens: number, runs: readonly VisionRun[], o: MropeOptions): MropePositions {
  const rows: [Int32Array, Int32Array, Int32Array] = [new Int32Array(numTokens), new Int32Array(numTokens), new Int32Array(numTokens)];
  const text = (from: number, count: number, first: number) => {
    for (let j = 0; j < count; j++) rows[0][from + j] = rows[1][from + j] = rows[2][from + j] = first + j;
  };
  let next = 0; // the largest position so far, plus one
  let st = 0; // the first token not placed yet
  for (const run of runs) {
    const m = o.mergeSize;
    const { t: gt } = run.grid;
    const [gh, gw] = [run.grid.h / m, run.grid.w / m];
    if (!Number.isInteger(gh) || !Number.isInteger(gw)) {
      throw new InvalidMessageError(`a ${run.grid.h} x ${run.grid.w} patch grid does not split into ${m} x ${m} merge blocks`);
    }
    const count = gt * gh * gw;
    if (run.start < st || run.start + count > numTokens) {
      throw new InvalidMessageError(
        `a vision run of ${count} tokens at ${run.start} overlaps the one before or ends past the prompt's ${numTokens} tokens`,
      );
    }
    const textLen = run.start - st;
    text(st, textLen, next);
    const base = next + textLen;
    const seconds = Math.fround(run.secondsPerGrid ?? 0);
    let tMax = 0;
    for (let i = 0; i < gt; i++) {
      const ti = o.tokensPerSecond === undefined ? i : Math.trunc(Math.fround(Math.fround(i * seconds) * o.tokensPerSecond));
      tMax = Math.max(tMax, ti);
      for (let r = 0; r < gh; r++) {
        for (let c = 0; c < gw; c++) {
          const k = run.start + (i * gh + r) * gw + c;
          rows[0][k] = base + ti;
          rows[1][k] = base + r;
          rows[2][k] = base + c;
        }
      }
    }
    next = base + Math.max(tMax, gh - 1, gw - 1) + 1;
    st = run.start + count;
  }
  text(st, numTokens - st, next);
  if (st < numTokens) next += numTokens - st;
  return { rows, delta: next - numTokens };
}

/**
 * The [3, n] positions (rows t, h, w, as a runner step takes them) of a sequence's tokens start ..
 * start + n - 1: the prompt's own where they fall in it, index + delta after it.
 */
export function mropeChunk(p: MropePositions, start: number, n: number): Uint32Array {
  const out = new Uint32Array(3 * n);
  const promptLength = p.rows[0].length;
  for (let j = 0; j < n; j++) {
    const i = start + j;
    for (let r = 0; r < 3; r++) out[r * n + j] = i < promptLength ? p.rows[r][i] : i + p.delta;
  }
  return out;
}
