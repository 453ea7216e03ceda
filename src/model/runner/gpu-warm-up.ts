// Compile the language model's GPU pipelines while the model loads instead of on the first request.
// Pipelines are built lazily, per step shape, the first time LanguageModel.step() meets that shape; on a
// software adapter (SwiftShader) that takes seconds, which used to land in the first request's TTFT with
// nothing on screen saying why. Here the runner runs the steps every request needs, once, on a scratch
// sequence, and reports each (the engine passes them on as EngineProgress phase 'compile', done / total):
//
//   step        tokens  what it compiles (beyond the earlier steps)
//   prefill     16      every layer kernel at prefill width (register-wide matmul), splice, argmax head
//   decode      1       the decode-width kernels (register-narrow matmul), reused by every decode step
//   batch       2, 4    the batched decode kernels (2 and 4 rows sharing each load of W: a step that
//                       decodes several sequences at once)
//   sampling    1       the sampling head (temperature > 0)
//
// The steps write K/V only into the blocks of a scratch sequence (ModelRunner.withScratchSequence) and
// free them after, so the KV pool is full again when the engine starts. The encoder compiles its own
// pipelines on its own device (EncoderCore.init); that is not counted here.

import { KvCacheFullError } from '../../errors';
import { NARROW_MAX_ROWS, narrowRows } from '../../kernels/matmul';
import type { LanguageModel } from '../language-model';
import type { ModelRunner, WarmUpProgress, WarmUpReport, WarmUpStepName } from './model-runner';

/** Row counts that select each batched decode kernel (one per distinct narrowRows value above 1). */
const BATCH_ROWS = [2, 4].filter((m) => narrowRows(m) === m);

export interface WarmUpStep {
  name: WarmUpStepName;
  numTokens: number;
  sampled: boolean;
  splice: boolean;
}

/** Which steps run (exported for tests). A prefill step is wider than a decode step's matmul plan. */
export function warmUpSteps(maxTokensPerStep: number): WarmUpStep[] {
  const prefillTokens = Math.max(1, Math.min(maxTokensPerStep, 2 * NARROW_MAX_ROWS));
  return [
    { name: 'prefill', numTokens: prefillTokens, sampled: false, splice: true },
    { name: 'decode', numTokens: 1, sampled: false, splice: false },
    // One sequence's rows stand in for one row per sequence: the matmuls see the same M either way.
    ...BATCH_ROWS.filter((rows) => rows <= maxTokensPerStep).map((rows) => ({
      name: 'batch' as const,
      numTokens: rows,
      sampled: false,
      splice: false,
    })),
    { name: 'sampling', numTokens: 1, sampled: true, splice: false },
  ];
}

/** Warm up `runner`, whose steps run on `lm`: its plans are built first, all at once, then each step runs. */
export async function warmUpGpuRunner(
  runner: ModelRunner,
  lm: LanguageModel,
  onProgress?: (p: WarmUpProgress) => void,
): Promise<WarmUpReport> {
  const t0 = performance.now();
  const pipelinesBefore = lm.gpu.pipelines.size;
  const steps = warmUpSteps(runner.limits.maxTokensPerStep);
  const numTokens = steps.reduce((a, s) => a + s.numTokens, 0);
  const hidden = runner.text.hiddenSize;
  const levels = runner.text.deepstackLayers ?? 0;
  const deepstack = levels > 0 ? { deepstack: Array.from({ length: levels }, () => new Float32Array(hidden)) } : {};
  try {
    await runner.withScratchSequence(numTokens, async (seqId) => {
      // Every plan the steps below need, built at once: their pipelines compile concurrently (on a CPU
      // adapter each takes up to seconds); the steps then run on them.
      // The first step's progress goes out before it: most of the compiling happens here.
      onProgress?.({ step: steps[0].name, done: 0, total: steps.length });
      // A batched decode step samples every row (one per sequence): its head is built for that many rows
      // too, where that many sequences can share a step (maxSeqs).
      const batchHead = (s: WarmUpStep) =>
        s.name === 'batch' && s.numTokens <= runner.limits.maxSeqs ? [{ rows: s.numTokens, headRows: s.numTokens }] : [];
      await lm.warmUp(steps.flatMap((s) => [{ rows: s.numTokens }, ...batchHead(s)]));
      let pos = 0;
      for (const [i, s] of steps.entries()) {
        if (i > 0) onProgress?.({ step: s.name, done: i, total: steps.length });
        await runner.run([
          {
            seqId,
            tokenIds: new Uint32Array(s.numTokens), // token 0: any valid id will do
            start: pos,
            // The last row samples (greedy, or at temperature 1 for the sampling head); one zero image
            // row stands in for an embedding so the splice kernel compiles too (and its DeepStack adds).
            sample: { temperature: s.sampled ? 1 : 0, topK: 0, topP: 1, seed: 0, step: 0 },
            media: s.splice ? [{ offset: 0, data: new Float32Array(hidden), ...deepstack }] : undefined,
          },
        ]);
        pos += s.numTokens;
      }
      onProgress?.({ step: 'done', done: steps.length, total: steps.length });
    });
  } catch (e) {
    if (e instanceof KvCacheFullError) return { numSteps: 0, numPipelinesCompiled: 0, ms: 0 };
    throw e;
  }
  return { numSteps: steps.length, numPipelinesCompiled: lm.gpu.pipelines.size - pipelinesBefore, ms: performance.now() - t0 };
}
