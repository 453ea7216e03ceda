// The Qwen2 and Qwen3 decoders of the Qwen-VL families (q/k/v biases; q/k norms; M-RoPE contiguous and
// interleaved; Qwen3-VL's DeepStack adds) on the tiny checkpoints, against test/reference/qwen_decoder.py (float64 PyTorch): for a
// prompt with text only, one image, two images of other shapes and a short video, the M-RoPE positions
// equal the reference's, the greedy tokens are the reference's, and every step's largest logits are within
// f32 noise of it (with a tied head the tokens repeat; the logits still show each token's position). The
// media rows are the golden's own, so only the decoder is under test. A prompt prefilled in two chunks
// that split an image, and all four prompts batched, give the same tokens.

import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseQwen25VlText } from '../../src/families/qwen2_5_vl/config';
import { parseQwen3VlText } from '../../src/families/qwen3_vl/config';
import { NodeDirSource } from '../../src/io/model-source-node';
import type { ModelConfig } from '../../src/model/config';
import { type LoadedModel, loadModelWithConfig } from '../../src/model/load';
import type { MediaRows, RunnerSeq } from '../../src/model/runner/model-runner';
import { mropeChunk, mropePositions, type VisionRun } from '../../src/processor/mrope-positions';
import { ensureTinyModels } from '../helpers/tiny-models';
import { useGpu } from './gpu';

interface Case {
  name: string;
  ids: number[];
  spans: Array<VisionRun & { kind: 'image' | 'video' }>;
  tokensPerSecond: number | null;
  positions: [number[], number[], number[]];
  delta: number;
  media: number[];
  /** DeepStack levels (Qwen3-VL), each one row per media row. */
  deepstack: number[][];
  tokens: number[];
  stepTop: Array<{ ids: number[]; logits: number[] }>;
  minTop2Gap: number;
  f32VsF64MaxAbsDiff: number;
}

const golden = JSON.parse(readFileSync(resolve(import.meta.dirname, '../fixtures/goldens/qwen-decoder.json'), 'utf8')) as {
  models: Array<{ checkpoint: string; cases: Case[] }>;
};
const PARSERS: Record<string, (c: Record<string, unknown>) => Omit<ModelConfig, 'vision' | 'audio'>> = {
  'qwen2_5_vl-tiny': parseQwen25VlText,
  'qwen3_vl-tiny': parseQwen3VlText,
};
const GREEDY = { temperature: 0, topK: 0, topP: 1, seed: 0, step: 0 };
const IMAGE_PAD = 151655;
const VIDEO_PAD = 151656;

const gpu = useGpu();

/** The case's prompt positions, computed by Tessera from its runs. */
function positionsOf(c: Case) {
  const runs = c.spans.map(({ start, grid, secondsPerGrid, kind }) => ({
    start,
    grid,
    secondsPerGrid: kind === 'video' ? secondsPerGrid : undefined,
  }));
  return mropePositions(c.ids.length, runs, { mergeSize: 2, tokensPerSecond: c.tokensPerSecond ?? undefined });
}

/**
 * The media rows (and their DeepStack levels) of the prompt tokens start .. start + n - 1, as one segment
 * per run of pad tokens.
 */
function mediaIn(c: Case, hidden: number, start: number, n: number): MediaRows[] {
  const pads = c.ids.flatMap((t, i) => (t === IMAGE_PAD || t === VIDEO_PAD ? [i] : []));
  const segments: Array<{ offset: number; rows: number[] }> = [];
  pads.forEach((i, k) => {
    if (i < start || i >= start + n) return;
    const last = segments[segments.length - 1];
    if (last && last.offset + last.rows.length === i - start) last.rows.push(k);
    else segments.push({ offset: i - start, rows: [k] });
  });
  const take = (from: number[], rows: number[]) => Float32Array.from(rows.flatMap((k) => from.slice(k * hidden, (k + 1) * hidden)));
  return segments.map(({ offset, rows }) => ({
    offset,
    data: take(c.media, rows),
    ...(c.deepstack.length > 0 ? { deepstack: c.deepstack.map((level) => take(level, rows)) } : {}),
  }));
}

describe.each(golden.models.map((m) => [m.checkpoint, m] as const))('%s decoder', (name, model) => {
  let loaded: LoadedModel;
  const hidden = () => loaded.config.text.hiddenSize;

  beforeAll(async () => {
    const source = new NodeDirSource(`${ensureTinyModels()}/${name}`);
    const config = PARSERS[name](JSON.parse((await source.readText('config.json'))!)) as ModelConfig;
    loaded = await loadModelWithConfig(gpu(), source, config, { kvCacheTokens: 1024, maxTokensPerStep: 128, maxSeqs: 8 });
  });
  afterAll(() => loaded?.destroy());

  /**
   * Greedy decoding of case `c` on sequences that already exist: the prompt in the given chunks (split
   * points), then one token a step; several cases share each step. Returns each case's tokens and logits.
   */
  async function decode(cases: Case[], seqIds: number[], splits: number[][]) {
    const { runner } = loaded;
    const pos = cases.map(positionsOf);
    const tokens: number[][] = cases.map(() => []);
    const logits: Float32Array[][] = cases.map(() => []);
    const vocab = runner.text.vocabSize;
    const chunks = cases.map((c, k) => [0, ...splits[k], c.ids.length]);
    const steps = Math.max(...chunks.map((b) => b.length - 1));
    // Prefill: step s runs chunk s of each case that has one; a case samples when its prompt ends.
    for (let s = 0; s < steps; s++) {
      const seqs: RunnerSeq[] = [];
      const who: number[] = [];
      cases.forEach((c, k) => {
        const b = chunks[k];
        if (s >= b.length - 1) return;
        const [from, to] = [b[s], b[s + 1]];
        const last = s === b.length - 2;
        seqs.push({
          seqId: seqIds[k],
          tokenIds: Uint32Array.from(c.ids.slice(from, to)),
          start: from,
          ropePositions: mropeChunk(pos[k], from, to - from),
          media: mediaIn(c, hidden(), from, to - from),
          ...(last ? { sample: GREEDY } : {}),
        });
        if (last) who.push(k);
      });
      const out = await runner.run(seqs, { readLogits: true });
      who.forEach((k, r) => {
        tokens[k].push(out.tokens[r]!);
        logits[k].push(out.logits!.slice(r * vocab, (r + 1) * vocab));
      });
    }
    const maxNew = Math.max(...cases.map((c) => c.tokens.length));
    for (let step = 1; step < maxNew; step++) {
      const seqs: RunnerSeq[] = cases.map((c, k) => {
        const at = c.ids.length + step - 1;
        return {
          seqId: seqIds[k],
          tokenIds: Uint32Array.of(tokens[k][step - 1]),
          start: at,
          ropePositions: mropeChunk(pos[k], at, 1),
          sample: GREEDY,
        };
      });
      const out = await runner.run(seqs, { readLogits: true });
      cases.forEach((_, k) => {
        tokens[k].push(out.tokens[k]!);
        logits[k].push(out.logits!.slice(k * vocab, (k + 1) * vocab));
      });
    }
    return { tokens, logits };
  }

  /** Run `use` with fresh sequences that hold each case's whole generation. */
  async function withSeqs<T>(cases: Case[], use: (ids: number[]) => Promise<T>, ids: number[] = []): Promise<T> {
    if (ids.length === cases.length) return use(ids);
    const c = cases[ids.length];
    return loaded.runner.withScratchSequence(c.ids.length + c.tokens.length, (id) => withSeqs(cases, use, [...ids, id]));
  }

  it.each(model.cases.map((c) => [c.name, c] as const))('%s: positions, tokens and logits of the reference', async (_n, c) => {
    expect(c.minTop2Gap).toBeGreaterThan(100 * c.f32VsF64MaxAbsDiff); // no near-tie the f32 path could flip
    const pos = positionsOf(c);
    expect(pos.rows.map((r) => Array.from(r))).toEqual(c.positions);
    expect(pos.delta).toBe(c.delta);
    const { tokens, logits } = await withSeqs([c], (ids) => decode([c], ids, [[]]));
    expect(tokens[0]).toEqual(c.tokens);
    let worst = 0;
    c.stepTop.forEach((top, step) => {
      top.ids.forEach((id, j) => {
        worst = Math.max(worst, Math.abs(logits[0][step][id] - top.logits[j]));
      });
    });
    expect(worst).toBeLessThan(2e-3);
  });

  it('a prompt prefilled in two chunks that split an image gives the same tokens', async () => {
    const c = model.cases.find((x) => x.spans.length > 0 && x.spans[0].kind === 'image')!;
    const split = c.spans[0].start + 3; // inside the first image's run
    const { tokens } = await withSeqs([c], (ids) => decode([c], ids, [[split]]));
    expect(tokens[0]).toEqual(c.tokens);
  });

  it('all four prompts batched give each the tokens of the reference', async () => {
    const { tokens } = await withSeqs(model.cases, (ids) =>
      decode(
        model.cases,
        ids,
        model.cases.map(() => []),
      ),
    );
    expect(tokens).toEqual(model.cases.map((c) => c.tokens));
  });
});
