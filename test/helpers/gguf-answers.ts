// How the GGUF tests compare an answer with its reference's (test/gpu/gguf*.test.ts): a quantized file's
// values go through other kernels than the f32 reference's (q8/q4/K-quant dequantized in the shader), so
// each step's log probability may differ by their rounding, and the greedy token only where the
// reference's top two are that close.

import { expect } from 'vitest';
import type { ChatCompletion } from '../../src/engine/types';

/** Log probabilities within `tolerance` step by step; tokens equal up to the first near tie of the reference. */
export function expectAnswerWithin(reference: ChatCompletion, got: ChatCompletion, tolerance = 2e-3): void {
  const la = reference.choices[0].logprobs!.content!;
  const lb = got.choices[0].logprobs!.content!;
  for (let i = 0; i < Math.min(la.length, lb.length); i++) {
    expect(Math.abs(lb[i].logprob - la[i].logprob), `step ${i}`).toBeLessThan(tolerance);
    if (lb[i].token === la[i].token) continue;
    const margin = la[i].top_logprobs[0].logprob - la[i].top_logprobs[1].logprob;
    expect(margin, `step ${i}: ${lb[i].token} vs ${la[i].token}`).toBeLessThan(tolerance);
    return;
  }
}
