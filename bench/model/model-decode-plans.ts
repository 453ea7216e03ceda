// The language model's two decode plans side by side on the bench model (LanguageModelOptions.decodePlan):
// 'fused' (the GPUs' default: norms fused into the products, decode-qkv / decode-gate-up / decode-head) and
// 'separate' (a dispatch per kernel: the CPU adapters' default). For each: dispatches per decode step, the
// JavaScript ms to encode one, and the step's wall time on this device, over the same greedy tokens. Counts
// and encode time hold on any device; the wall time says which plan suits this one (on SwiftShader the
// fused kernels' barriers cost more than the dispatches they save). Runs in Node (model-decode-plans-node.ts,
// through the benchmarks' Vite server) and in Chromium (decode-plans-page.ts), whose WebGPU encodes for
// other costs than Node's Dawn.

import { loadModel } from '../../src/families/load';
import { readModelConfig } from '../../src/families/read-config';
import type { GpuContext } from '../../src/gpu/context';
import type { ModelSource } from '../../src/io/model-source';
import { generate } from '../../src/model/generate';
import type { DecodePlan } from '../../src/model/language-model';
import {
  chooseVitAttentionPlan,
  VIT_ATTENTION_PLANS,
  vitAttentionScratchBytes,
  type VitAttentionPlan,
} from '../../src/kernels/vit-attention';

export interface DecodePlanFigures {
  plan: DecodePlan;
  kernelVariant: string;
  layers: number;
  dispatchesPerDecodeStep: number;
  /** Median over the decode steps after the first (whose plans compile). */
  encodeMs: number;
  stepMs: number;
  tokens: number[];
}

export interface DecodePlansResult {
  /** Where it ran: 'node' (Dawn) or 'browser' (Chromium's WebGPU). */
  env: 'node' | 'browser';
  /** performance.now()'s resolution where it ran, in ms (Chromium coarsens it unless the page is cross-origin isolated). */
  timerResolutionMs: number;
  plans: DecodePlanFigures[];
  /** Whether both plans decoded the same greedy tokens. */
  sameTokens: boolean;
  /** One vision tile's attention (the bench model's tower): the global scratch each ViT attention plan needs. */
  vitAttention?: VitAttentionFigures;
}

export interface VitAttentionFigures {
  tokens: number;
  heads: number;
  headDim: number;
  /** Bytes besides qkv and out, per plan. */
  scratchBytes: Record<VitAttentionPlan, number>;
  /** The plan each kernel variant runs. */
  chosen: { workgroup: VitAttentionPlan; register: VitAttentionPlan };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;

export interface DecodePlansOptions {
  env: DecodePlansResult['env'];
  gpu: GpuContext;
  /** The bench model's files (each plan loads it anew). */
  source: () => ModelSource;
  steps: number;
  log: (line: string) => void;
}

/** Both plans on `gpu` (the caller destroys it). */
export async function runDecodePlans(o: DecodePlansOptions): Promise<DecodePlansResult> {
  const { gpu } = o;
  const plans: DecodePlanFigures[] = [];
  for (const plan of ['separate', 'fused'] as const) {
    const model = await loadModel(gpu, o.source(), {
      vision: false,
      decodePlan: plan,
      kvCacheTokens: 512,
      maxTokensPerStep: 64,
    });
    try {
      const tokens: number[] = [];
      const encodeMs: number[] = [];
      const stepMs: number[] = [];
      const dispatches: number[] = [];
      let t = performance.now();
      // A text prompt of 16 ids: the first token comes from its prefill step, each after from a decode step.
      const promptIds = Uint32Array.from({ length: 16 }, (_, i) => 100 + 7 * i);
      for await (const id of generate(model.runner, 1, {
        promptIds,
        placeholders: [],
        maxNewTokens: o.steps + 2,
        stopIds: new Set(),
        chunkSize: 64,
      })) {
        const now = performance.now();
        const step = model.runner.lastStep;
        if (tokens.length >= 2) {
          encodeMs.push(step.encodeMs);
          stepMs.push(now - t);
          dispatches.push(step.numDispatches);
        }
        tokens.push(id);
        t = now;
      }
      const figures: DecodePlanFigures = {
        plan: model.lm.decodePlan,
        kernelVariant: gpu.kernelVariant,
        layers: model.config.text.numLayers,
        dispatchesPerDecodeStep: Math.max(...dispatches),
        encodeMs: median(encodeMs),
        stepMs: median(stepMs),
        tokens,
      };
      o.log(
        `${o.env}: decode plan '${figures.plan}' (${figures.kernelVariant} kernels, ${figures.layers} layers): ${figures.dispatchesPerDecodeStep} dispatches per decode step, encode ${figures.encodeMs.toFixed(3)} ms, step ${figures.stepMs.toFixed(1)} ms`,
      );
      plans.push(figures);
    } finally {
      model.destroy();
    }
  }
  const [a, b] = plans;
  const config = await readVisionShape(o.source());
  return {
    vitAttention: config && vitAttentionFigures(gpu, config),
    env: o.env,
    timerResolutionMs: timerResolution(),
    plans,
    sameTokens: a !== undefined && b !== undefined && a.tokens.join() === b.tokens.join(),
  };
}

/** The smallest step performance.now() takes here, in ms. */
function timerResolution(): number {
  let smallest = Number.POSITIVE_INFINITY;
  for (let i = 0; i < 50; i++) {
    const t0 = performance.now();
    let t1 = performance.now();
    while (t1 === t0) t1 = performance.now();
    smallest = Math.min(smallest, t1 - t0);
  }
  return smallest;
}

/** One tile's patches and the vision tower's heads (absent: no vision tower). */
async function readVisionShape(source: ModelSource): Promise<{ tokens: number; heads: number; headDim: number } | undefined> {
  const v = (await readModelConfig(source)).vision;
  return v && { tokens: (v.imageSize / v.patchSize) ** 2, heads: v.numHeads, headDim: v.headDim };
}

function vitAttentionFigures(gpu: GpuContext, shape: { tokens: number; heads: number; headDim: number }): VitAttentionFigures {
  const full = { batch: 1, ...shape };
  const scratchBytes = Object.fromEntries(VIT_ATTENTION_PLANS.map((plan) => [plan, vitAttentionScratchBytes(gpu, full, plan)])) as Record<
    VitAttentionPlan,
    number
  >;
  return {
    ...shape,
    scratchBytes,
    chosen: {
      workgroup: chooseVitAttentionPlan(gpu, { variant: 'workgroup' }),
      register: chooseVitAttentionPlan(gpu, { variant: 'register' }),
    },
  };
}
