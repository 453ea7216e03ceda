// The inputs file of the bench request (model-request.ts) that the ONNX export checks against.
// Tessera's processor (HF-exact pixels, see test/unit/processor-parity) turns public/sample.png and the
// prompt into token ids and pixel values; bench/onnx-export/export.py runs the project's PyTorch reference
// and the export modules on exactly these, and the peer is fed them too, so the greedy tokens of the three
// can be compared without preprocessing differences (transformers.js resizes with its own interpolation).
//
//   <model>/bench-input/input.json         prompt, image, input_ids, numTiles, pixel shape
//   <model>/bench-input/pixel_values.f32   [numTiles, 3, 512, 512] f32 little-endian

import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadProcessorFromDirectory } from '../../src/processor/node';
import { BENCH_IMAGE, BENCH_PROMPT, benchMessages, type BenchInput } from './model-request';

/** Runs our processor on the bench request and writes bench-input/ under the model folder. */
export async function writeBenchInput(modelDir: string, repoRoot: string): Promise<BenchInput> {
  const processor = await loadProcessorFromDirectory(modelDir);
  const bytes = new Uint8Array(readFileSync(join(repoRoot, BENCH_IMAGE)));
  const prepared = await processor.prepare(benchMessages(bytes));
  const image = prepared.images[0];
  const tile = image.layout.tileSize;
  const input: BenchInput = {
    prompt: BENCH_PROMPT,
    image: BENCH_IMAGE,
    inputIds: Array.from(prepared.plan.tokenIds),
    numTiles: image.layout.numTiles,
    pixelShape: [image.layout.numTiles, 3, tile, tile],
    imageTokens: prepared.plan.placeholders.reduce((a, p) => a + p.length, 0),
  };
  const dir = join(modelDir, 'bench-input');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'input.json'), `${JSON.stringify(input)}\n`);
  const px = image.pixelValues;
  writeFileSync(join(dir, 'pixel_values.f32'), new Uint8Array(px.buffer, px.byteOffset, px.byteLength));
  return input;
}
