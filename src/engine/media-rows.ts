// Which embedding rows a chunk of a request's prompt splices, and from where. An image's placeholder
// tokens come in runs (one per tile, separated by row/column markers; a pruned video's, one per frame); run
// i takes the next rows of the item's embeddings, in order:
//
//   prompt:   ... <fake><row_1_col_1> [img x64] <fake><row_1_col_2> [img x64] ... \n\n<fake><global-img> [img x64]
//   chunk:                 |------------ tokens c0..c1 ------------|
//   segments:              {offset: run0.start - c0, rows 0..63}, {offset: run1.start - c0, rows 64..(c1-1)}
//
// A Qwen3-VL item's data holds its DeepStack levels after its rows; each segment takes the same rows of
// each level. The scheduler's doorstep clamp guarantees every item overlapping a chunk is ready (its data
// present).

import { InternalError } from '../errors';
import type { MediaRows } from '../model/runner/model-runner';
import type { RequestMedia } from './intake/request-media';

export function chunkMediaRows(
  media: ReadonlyArray<Pick<RequestMedia, 'placeholder' | 'data'>>,
  c0: number,
  c1: number,
  hidden: number,
): MediaRows[] {
  const out: MediaRows[] = [];
  for (const m of media) {
    const p = m.placeholder;
    const last = p.runs[p.runs.length - 1];
    if (p.runs[0].offset >= c1 || last.offset + last.length <= c0) continue;
    if (!m.data) throw new InternalError(`chunk [${c0}, ${c1}) covers the media item at ${p.offset}, whose embeddings are not ready`);
    // Qwen3-VL's items carry their DeepStack levels after their rows: [length × (1 + levels), hidden].
    const levelSize = p.length * hidden;
    const levels = m.data.length / levelSize - 1;
    if (!Number.isInteger(levels) || levels < 0) {
      throw new InternalError(
        `the media item at ${p.offset} holds ${m.data.length} values, not a multiple of its ${p.length} rows of ${hidden}`,
      );
    }
    let row = 0; // first embedding row of the current run
    for (const run of p.runs) {
      const a = Math.max(run.offset, c0);
      const b = Math.min(run.offset + run.length, c1);
      if (a < b) {
        const r0 = row + (a - run.offset);
        const rows = (level: number) => m.data!.subarray(level * levelSize + r0 * hidden, level * levelSize + (r0 + (b - a)) * hidden);
        const deepstack = Array.from({ length: levels }, (_, l) => rows(l + 1));
        out.push({ offset: a - c0, data: rows(0), ...(levels > 0 ? { deepstack } : {}) });
      }
      row += run.length;
    }
  }
  return out;
}
