// Goldens from the independent PyTorch reference (test/reference/, committed in test/fixtures/goldens/).

import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

export const GOLDEN_DIR = resolve(import.meta.dirname, '../fixtures/goldens');

interface GoldenFile {
  shape: number[];
  dtype: string;
}

export interface GoldenManifest {
  checkpoints: Record<string, Record<string, string>>;
  files: Record<string, GoldenFile>;
  greedy: Record<string, { tokens: number[]; stop_ids: number[] }>;
}

export function goldenManifest(): GoldenManifest {
  return JSON.parse(readFileSync(resolve(GOLDEN_DIR, 'manifest.json'), 'utf8'));
}

export function goldenF32(name: string): Float32Array {
  const b = readFileSync(resolve(GOLDEN_DIR, name));
  return new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
}

export function goldenU8(name: string): Uint8Array {
  return new Uint8Array(readFileSync(resolve(GOLDEN_DIR, name)));
}

export function goldenInputIds(): number[] {
  return JSON.parse(readFileSync(resolve(GOLDEN_DIR, 'tiny-input.json'), 'utf8')).input_ids;
}

/** One request of test/reference/make-qwen-input.ts: one user message, its image parts (paths), video parts (frame paths and seconds) and text parts. */
export interface QwenPipelineCase {
  id: string;
  content: Array<{ image?: string; text?: string; video?: { frames: string[]; timestamps: number[] } }>;
}

/** make-qwen-input.ts's requests, and each tiny checkpoint's prompt ids and patch grids for them. */
export interface QwenPipelineInput {
  cases: QwenPipelineCase[];
  models: Array<{
    checkpoint: string;
    cases: Array<{
      id: string;
      ids: number[];
      grids: Array<{ t: number; h: number; w: number }>;
      /** Each video's frame-group grid and the groups' seconds. */
      videos: Array<{ group: { h: number; w: number }; timestamps: number[] }>;
    }>;
  }>;
}

/** test/reference/qwen_pipeline.py's answers: greedy tokens and every step's largest logits, per request. */
export interface QwenPipelineGolden {
  models: Array<{
    checkpoint: string;
    cases: Array<{
      id: string;
      tokens: number[];
      stepTop: Array<{ ids: number[]; logits: number[] }>;
      /** log Σ exp(logits) per step: the chosen token's log probability is its logit minus this. */
      logSumExp: number[];
      minTop2Gap: number;
      f32VsF64MaxAbsDiff: number;
    }>;
  }>;
}

export function qwenPipelineGoldens(): { input: QwenPipelineInput; golden: QwenPipelineGolden } {
  const read = (name: string) => JSON.parse(readFileSync(resolve(GOLDEN_DIR, name), 'utf8'));
  return { input: read('qwen-pipeline-input.json'), golden: read('qwen-pipeline.json') };
}
