// bench:model, weight dtypes (Node side): the accuracy of each weight dtype against f32 at the
// SmolVLM-256M shape, through the whole model: first-step logits max error and KL divergence, and top-1
// agreement over 256 teacher-forced positions (the bench request's prompt with its image, then a fixed
// pseudo-random continuation), with src/model/weights/accuracy.ts as in test/gpu/accuracy.test.ts.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { GpuContext } from '../../src/gpu/context';
import { NodeDirSource } from '../../src/io/model-source-node';
import { loadModel } from '../../src/families/load';
import { compareLogits, teacherForcedLogits, type LogitsAgreement } from '../../src/model/weights/accuracy';
import type { WeightDtype } from '../../src/model/weights/dtype';
import type { WeightStore } from '../../src/model/weights/store';
import { loadProcessorFromDirectory } from '../../src/processor/node';
import { mulberry32 } from '../../src/selfcheck/random';
import { benchMessages, BENCH_IMAGE } from './model-request';

export const ACCURACY_POSITIONS = 256;

/** Per dtype: how it compares with f32 (f32 itself is the reference and is not listed). */
export async function measureAccuracy(
  gpu: GpuContext,
  modelDir: string,
  repoRoot: string,
  dtypes: readonly WeightDtype[],
  store: WeightStore | undefined,
  log: (line: string) => void,
): Promise<Record<string, LogitsAgreement>> {
  const processor = await loadProcessorFromDirectory(modelDir);
  const prepared = await processor.prepare(benchMessages(new Uint8Array(readFileSync(join(repoRoot, BENCH_IMAGE)))));
  const next = mulberry32(8);
  const ids = Uint32Array.from([
    ...prepared.plan.tokenIds,
    ...Array.from({ length: ACCURACY_POSITIONS - 1 }, () => Math.floor(next() * 49000)),
  ]);
  const placeholders = prepared.plan.placeholders.flatMap((p) => p.runs);
  const logitsFor = async (dtype: WeightDtype) => {
    const t0 = performance.now();
    const model = await loadModel(gpu, new NodeDirSource(modelDir), {
      kvCacheTokens: ids.length + 64,
      maxTokensPerStep: 64,
      maxSeqs: 64,
      dtype,
      weightStore: store,
    });
    try {
      const image = prepared.images[0];
      const vision = await model.vision!.encode({ pixels: image.pixelValues, numTiles: image.layout.numTiles });
      try {
        const logits = await teacherForcedLogits(model, {
          ids,
          media: { embeddings: vision.embeddings, placeholders },
          numPositions: ACCURACY_POSITIONS,
        });
        log(`accuracy: ${dtype} teacher-forced ${ACCURACY_POSITIONS} positions in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
        return logits;
      } finally {
        gpu.release(vision.embeddings);
      }
    } finally {
      model.destroy();
    }
  };
  const ref = await logitsFor('f32');
  const out: Record<string, LogitsAgreement> = {};
  for (const dtype of dtypes) {
    if (dtype === 'f32') continue;
    const r = compareLogits(ref, await logitsFor(dtype), 0);
    out[dtype] = r;
    log(
      `accuracy: ${dtype} vs f32: top-1 ${(r.top1Agreement * 100).toFixed(2)}% of ${r.positions} (${(r.top1AgreementDecisive * 100).toFixed(2)}% of ` +
        `${r.decisivePositions} decisive), mean KL ${r.meanKl.toExponential(2)}, first-step max |err| ${r.firstStepMaxAbsErr.toExponential(2)}, ` +
        `first-step KL ${r.firstStepKl.toExponential(2)}`,
    );
  }
  return out;
}
