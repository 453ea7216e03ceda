// The language model's two decode plans side by side on the bench model (LanguageModelOptions.decodePlan):
// 'fused' (the GPUs' default: norms fused into the products, decode-qkv / decode-gate-up / decode-head) and
// 'separate' (a dispatch per kernel: the CPU adapters' default). For each: dispatches per decode step, the
// JavaScript ms to encode one, and the step's wall time on this device, over the same greedy tokens. Counts
// and encode time hold on any device; the wall time says which plan suits this one (on SwiftShader the
// fused kernels' barriers cost more than the dispatches they save). Loaded through the benchmarks' Vite
// server, as model-node.ts is.

import { loadModel } from '../../src/families/load';
import { createNodeGpuContext } from '../../src/gpu/node';
import { NodeDirSource } from '../../src/io/model-source-node';
import { generate } from '../../src/model/generate';
import type { DecodePlan } from '../../src/model/language-model';

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
  plans: DecodePlanFigures[];
  /** Whether both plans decoded the same greedy tokens. */
  sameTokens: boolean;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;

export async function runDecodePlans(o: { modelDir: string; steps: number; log: (line: string) => void }): Promise<DecodePlansResult> {
  const gpu = await createNodeGpuContext();
  const plans: DecodePlanFigures[] = [];
  try {
    for (const plan of ['separate', 'fused'] as const) {
      const model = await loadModel(gpu, new NodeDirSource(o.modelDir), {
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
          `decode plan '${figures.plan}' (${figures.kernelVariant} kernels, ${figures.layers} layers): ${figures.dispatchesPerDecodeStep} dispatches per decode step, encode ${figures.encodeMs.toFixed(3)} ms, step ${figures.stepMs.toFixed(1)} ms`,
        );
        plans.push(figures);
      } finally {
        model.destroy();
      }
    }
  } finally {
    gpu.destroy();
  }
  const [a, b] = plans;
  return { plans, sameTokens: a !== undefined && b !== undefined && a.tokens.join() === b.tokens.join() };
}
