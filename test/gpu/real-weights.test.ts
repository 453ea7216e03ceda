// Real pretrained weights where the repository has them: SmolVLM2-500M's vision embedding stage (BF16
// patch conv + bias + learned positions) on public/sample.png resized to 512x512, against the PyTorch
// reference golden. Tolerance as in parity.test.ts.

import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { NodeDirSource } from '../../src/io/model-source-node';
import { prepareEmbeddingGather } from '../../src/kernels/embedding-gather';
import { submitDispatches } from '../../src/kernels/dispatch';
import { preparePatchEmbed } from '../../src/kernels/patch-embed';
import { prepareResidualAdd } from '../../src/kernels/residual-add';
import { streamSafetensors, toFloat32 } from '../../src/model/weights/safetensors';
import { compareClose, describeComparison } from '../../src/selfcheck/compare';
import { goldenF32, goldenU8 } from '../helpers/goldens';
import { useGpu } from './gpu';

const gpu = useGpu();
const DIR = resolve(import.meta.dirname, '../fixtures/models/SmolVLM2-500M-Video-Instruct-vision-embeddings');

describe('SmolVLM2-500M real vision embeddings', () => {
  it('patch embedding + positions match the PyTorch reference', async () => {
    const opened = await new NodeDirSource(DIR).openBytes('vision_embeddings.safetensors');
    const w: Record<string, Float32Array> = {};
    for await (const { info, bytes } of streamSafetensors(opened!.stream, 'vision_embeddings.safetensors')) {
      expect(info.dtype).toBe('BF16');
      w[info.name] = toFloat32(info, bytes);
    }
    const u8 = goldenU8('real-vision-input-512.u8.bin');
    // HF: rescale by 1/255 (f64 factor applied to f32 data), then (x - 0.5) / 0.5 in f32.
    const scale = Math.fround(1 / 255);
    const pixels = Float32Array.from(u8, (v) => Math.fround(Math.fround(Math.fround(v * scale) - 0.5) / 0.5));
    const g = gpu();
    const t = {
      pixels: g.upload(pixels, [1, 3, 512, 512], 'pixels'),
      weight: g.upload(w['patch_embedding.weight'], [768, 768], 'patch.w'),
      bias: g.upload(w['patch_embedding.bias'], [768], 'patch.b'),
      table: g.upload(w['position_embedding.weight'], [1024, 768], 'pos'),
      ids: g.upload(
        Uint32Array.from({ length: 1024 }, (_, i) => i),
        [1024],
        'ids',
      ),
      pos: g.createTensor([1024, 768], 'f32', 'pos-rows'),
      y: g.createTensor([1024, 768], 'f32', 'y'),
      errors: g.upload(new Uint32Array(2), [2], 'errors'),
    };
    const dispatches = [
      await preparePatchEmbed(
        g,
        { pixels: t.pixels, weight: t.weight, bias: t.bias, y: t.y },
        { batch: 1, channels: 3, height: 512, width: 512, patch: 16, outDim: 768 },
      ),
      await prepareEmbeddingGather(
        g,
        { ids: t.ids, table: t.table, out: t.pos, errors: t.errors },
        { numTokens: 1024, vocab: 1024, dim: 768 },
      ),
      await prepareResidualAdd(g, { acc: t.y, x: t.pos }),
    ];
    submitDispatches(g, dispatches);
    const got = await g.readF32(t.y);
    for (const d of dispatches) d.release();
    for (const x of Object.values(t)) g.release(x);
    const tol = { atol: 1e-4, rtol: 1e-3 };
    const c = compareClose(got, goldenF32('real-vision-embeddings.f32.bin'), tol);
    if (!c.pass) throw new Error(describeComparison('real vision embeddings', c, tol));
    expect(c.maxAbsErr).toBeLessThan(1e-4);
  });
});
