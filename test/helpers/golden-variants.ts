// Which goldens each tiny checkpoint is checked against (test/fixtures/goldens/manifest.json): the
// original two keep their historic file names, the head- and patch-size variants (make-tiny.ts
// TINY_SHAPES) are named after the checkpoint. Plain fs, so Vitest and Playwright specs share it.

import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

const DIR = resolve(import.meta.dirname, '../fixtures/goldens');

export interface GoldenVariant {
  model: string;
  /** Prompt ids file (transformers.js). */
  input: string;
  /** u8 tiles the processor must reproduce. */
  tiles: string;
  numTiles: number;
  tileSize: number;
  vision?: string;
  connector?: string;
  logits: string;
  /** What the variant exercises, for test names. */
  about: string;
}

interface Manifest {
  variant_inputs: Record<string, { file: string; pixel_tiles: string; tiles: number }>;
  files: Record<string, { shape: number[] }>;
}

export function goldenVariants(): GoldenVariant[] {
  const m = JSON.parse(readFileSync(resolve(DIR, 'manifest.json'), 'utf8')) as Manifest;
  const out: GoldenVariant[] = [
    {
      model: 'smolvlm-tiny',
      input: 'tiny-input.json',
      tiles: 'tiny-pixel-tiles.u8.bin',
      numTiles: 13,
      tileSize: 128,
      vision: 'tiny-vision-out.f32.bin',
      connector: 'tiny-connector-out.f32.bin',
      logits: 'tiny-logits-step0.f32.bin',
      about: 'idefics3, BF16, separate lm_head',
    },
    {
      model: 'smolvlm-tiny-tied',
      input: 'tiny-input.json',
      tiles: 'tiny-pixel-tiles.u8.bin',
      numTiles: 13,
      tileSize: 128,
      logits: 'tiny-tied-logits-step0.f32.bin',
      about: 'smolvlm, F16 shards, tied lm_head',
    },
  ];
  const about: Record<string, string> = {
    'smolvlm-tiny-so400m': 'so400m layout: vision head_dim 72, patch 14, scale 3',
    'smolvlm-tiny-hd128': 'text head_dim 128',
    'smolvlm-tiny-hd8': 'vision head_dim 16, text head_dim 8',
  };
  for (const [model, v] of Object.entries(m.variant_inputs)) {
    const tileShape = m.files[v.pixel_tiles].shape;
    out.push({
      model,
      input: v.file.split('/').pop()!,
      tiles: v.pixel_tiles,
      numTiles: v.tiles,
      tileSize: tileShape[3],
      vision: `${model}-vision-out.f32.bin`,
      connector: `${model}-connector-out.f32.bin`,
      logits: `${model}-logits-step0.f32.bin`,
      about: about[model] ?? model,
    });
  }
  return out;
}

export function goldenInputIdsOf(input: string): number[] {
  return JSON.parse(readFileSync(resolve(DIR, input), 'utf8')).input_ids;
}
