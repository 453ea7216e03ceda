// engine.stats(): one snapshot of the counters the engine's parts keep (GPU memory, KV blocks, the
// scheduler, the encoder and its caches, media lifecycle), shaped for users and benchmarks.

import type { LifecycleCounters, MediaEncoder } from '../encoder/media-encoder';
import type { GpuContext } from '../gpu/context';
import type { DeviceChoice, EngineModel } from './engine-model';
import type { Scheduler } from '../scheduler/scheduler';
import type { EncoderPacing } from './encoder-pacing';
import type { StepRecord } from './serve-loop';
import type { StorageCheck } from '../storage/check-storage';
import type { EngineStats } from './types';

export interface StatsSources {
  counters: { requests: number; failedRequests: number; deviceLosses: number; deviceRecoveries: number };
  /** Absent on the CPU backend (its GPU figures are then zero). */
  gpu: GpuContext | undefined;
  device: DeviceChoice;
  model: EngineModel;
  scheduler: Scheduler;
  history: readonly StepRecord[];
  media: MediaEncoder;
  lifecycle: LifecycleCounters;
  last: EngineStats['last'];
  pacing: EncoderPacing;
  storage: StorageCheck | undefined;
}

function medianAndMax(values: number[]): { p50: number; max: number } {
  if (values.length === 0) return { p50: 0, max: 0 };
  const sorted = [...values].sort((a, b) => a - b);
  return { p50: sorted[Math.floor((sorted.length - 1) / 2)], max: sorted[sorted.length - 1] };
}

export function engineStats(s: StatsSources): EngineStats {
  const kv = s.model.runner.kv.stats();
  const pool = s.gpu?.pool.stats() ?? { numLive: 0, bytesLive: 0, bytesFree: 0 };
  const memory = s.gpu?.memory.stats() ?? { bytesLive: 0, peakBytes: 0, byArea: {}, peakByArea: {} };
  const step = s.model.runner.lastStep;
  const sched = s.scheduler.stats();
  return {
    ...s.counters,
    device: { ...s.device },
    kv: {
      numBlocks: kv.numBlocks,
      numFreeBlocks: kv.numFree,
      blockSize: kv.blockSize,
      numCachedBlocks: kv.numCached,
      evictions: kv.evictions,
    },
    scheduler: {
      numWaiting: sched.numWaiting,
      numRunning: sched.numRunning,
      numSteps: sched.numSteps,
      batchRows: medianAndMax(s.history.map((h) => h.rows)),
      batchSeqs: medianAndMax(s.history.map((h) => h.seqs)),
      prefixQueryTokens: sched.prefixQueryTokens,
      prefixHitTokens: sched.prefixHitTokens,
      prefixHitRate: sched.prefixQueryTokens > 0 ? sched.prefixHitTokens / sched.prefixQueryTokens : 0,
      numPreemptions: sched.numPreemptions,
      numDoorstepStalls: sched.numDoorstepStalls,
      encodingEmbeddings: sched.encodingEmbeddings,
    },
    decodePriority: { encoderShare: s.pacing.policy?.encoderShare ?? 0, grantedMs: s.pacing.grantedMs, chargedMs: s.pacing.chargedMs },
    gpuPool: { numLive: pool.numLive, bytesLive: pool.bytesLive, bytesFree: pool.bytesFree },
    weightBytes: s.model.stats.weightBytes,
    kvCacheBytes: s.model.stats.kvCacheBytes,
    gpuMemory: { bytesLive: memory.bytesLive, peakBytes: memory.peakBytes, byArea: memory.byArea, peakByArea: memory.peakByArea },
    decodeStep: {
      numTokens: step.numTokens,
      numPaddedTokens: step.numPaddedTokens,
      numDispatches: step.numDispatches,
      numCommandBuffers: step.numCommandBuffers,
      numReadbacks: step.numReadbacks,
      readbackBytes: step.readbackBytes,
      encodeMs: step.encodeMs,
    },
    encoder: s.media.stats(),
    lifecycle: { ...s.lifecycle },
    last: s.last,
    ...(s.storage ? { storage: s.storage } : {}),
  };
}
