// ModelRunner on WebGPU: the LanguageModel's plans (row buckets, pipelines, bind groups) over the paged KV
// cache whose accounting is `kv`. A step's sequences become one flattened StepInput (flatten.ts), one
// command buffer and one readback; NON_FINITE_TOKEN becomes null; a step that fails because the device was
// lost rejects with DeviceLostError, whatever the driver reported first.

import { NON_FINITE_TOKEN } from '../../kernels/argmax';
import { DispatchTimer, type TimingMethod } from '../../kernels/dispatch-timer';
import type { KvManager } from '../../kv/kv-manager';
import type { TextConfig } from '../config';
import type { LanguageModel } from '../language-model';
import { flattenBatch } from './flatten';
import { warmUpGpuRunner } from './gpu-warm-up';
import { ScratchSequences } from './scratch-sequences';
import type { ModelRunner, RunnerLimits, RunnerSeq, RunOptions, RunResult, StepStats, WarmUpProgress, WarmUpReport } from './model-runner';

/** How long a failed step waits to learn whether the device was lost (a lost device fails steps first). */
const LOSS_GRACE_MS = 250;

export class GpuModelRunner implements ModelRunner {
  readonly limits: RunnerLimits;
  private readonly scratch: ScratchSequences;

  constructor(
    readonly lm: LanguageModel,
    readonly kv: KvManager,
  ) {
    this.scratch = new ScratchSequences(kv);
    this.limits = {
      maxTokensPerStep: lm.options.maxTokensPerStep,
      maxSeqs: lm.options.maxSeqs,
      contextWindow: Math.min(lm.config.text.maxPositions, lm.maxBlocksPerSeq * kv.blockSize),
      modelPositions: lm.config.text.maxPositions,
      kvCacheTokens: kv.pool.maxBlocks * kv.blockSize,
    };
  }

  get text(): TextConfig {
    return this.lm.config.text;
  }

  get lastStep(): StepStats {
    return this.lm.lastStep;
  }

  async run(seqs: readonly RunnerSeq[], options: RunOptions = {}): Promise<RunResult> {
    const { lm, kv } = this;
    const input = flattenBatch(
      seqs.map((s) => ({
        tokenIds: s.tokenIds,
        start: s.start,
        ropePositions: s.ropePositions,
        slots: kv.slots(s.seqId, s.start, s.tokenIds.length),
        blockTable: kv.blockTable(s.seqId),
        sample: s.sample,
        adjust: s.adjust,
        media: s.media && s.media.length > 0 ? s.media : undefined,
      })),
      lm.maxBlocksPerSeq,
      lm.config.text.hiddenSize,
    );
    let out: Awaited<ReturnType<LanguageModel['step']>>;
    try {
      out = await lm.step(input, options);
    } catch (caught) {
      throw (await lm.gpu.lostWithin(LOSS_GRACE_MS)) ?? caught;
    }
    return { tokens: Array.from(out.ids, (id) => (id === NON_FINITE_TOKEN ? null : id)), ...(out.logits ? { logits: out.logits } : {}) };
  }

  warmUp(onProgress?: (p: WarmUpProgress) => void): Promise<WarmUpReport> {
    return warmUpGpuRunner(this, this.lm, onProgress);
  }

  withScratchSequence<T>(numTokens: number, use: (seqId: number) => Promise<T>): Promise<T> {
    return this.scratch.with(numTokens, use);
  }

  createTimer(method?: TimingMethod): DispatchTimer {
    return new DispatchTimer(this.lm.gpu, method);
  }

  destroy(): void {
    this.lm.destroy();
  }
}
