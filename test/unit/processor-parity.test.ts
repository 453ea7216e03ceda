// Parity of the processor with transformers.js's Idefics3Processor (same checkpoint files, local only) and
// with the PyTorch/PIL golden of the tiny checkpoint.
//
// Tokens must be identical. Pixels cannot be: transformers.js (Node) resizes with sharp's lanczos3 and then
// resizes float tensors bilinearly (interpolate_4d) for resize_for_vision_encoder and the global image,
// while HF Python and this processor use PIL's Lanczos for every step. The pixel tolerance below is what was
// measured on these images (normalised units, range [-1, 1]); the PIL golden, not transformers.js, is the
// exactness check.

import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { AutoProcessor, RawImage, env } from '@huggingface/transformers';
import sharp from 'sharp';
import { beforeAll, describe, expect, it } from 'vitest';
import { makeTiny } from '../../scripts/make-tiny';
import { Idefics3Processor, type ChatMessage, type ModelFiles } from '../../src/processor/index';
import { NodeDirSource } from '../../src/io/model-source-node';
import { decodeImageNode } from '../../src/processor/node';

const ROOT = resolve(import.meta.dirname, '../..');
const REAL = 'test/fixtures/models/SmolVLM-256M-Instruct';
const TINY = 'public/models/smolvlm-tiny';
const GOLDEN_TILES = resolve(ROOT, 'test/fixtures/goldens/tiny-pixel-tiles.u8.bin');
const GOLDEN_INPUT = resolve(ROOT, 'test/fixtures/goldens/tiny-input.json');
const PROMPT = 'Can you describe this image?';

// Measured (console output of this file): max |diff| 0 (1x1) to 0.71, mean 0 to 0.022 on these images.
const PIXEL_MAX_ABS = 1.0;
const PIXEL_MEAN_ABS = 0.04;

/** A smooth test image with hard edges: gradients, a disc, stripes. Deterministic. */
async function makeImage(width: number, height: number): Promise<Uint8Array> {
  const raw = Buffer.alloc(width * height * 3);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const o = (y * width + x) * 3;
      const inDisc = (x - width / 2) ** 2 + (y - height / 3) ** 2 < (Math.min(width, height) / 4) ** 2;
      raw[o] = Math.round((255 * x) / Math.max(1, width - 1));
      raw[o + 1] = inDisc ? 230 : Math.round((255 * y) / Math.max(1, height - 1));
      raw[o + 2] = Math.floor(x / 8) % 2 === 0 ? 40 : 200;
    }
  }
  return new Uint8Array(
    await sharp(raw, { raw: { width, height, channels: 3 } })
      .png()
      .toBuffer(),
  );
}

function withPreprocessor(dir: string, patch: Record<string, unknown>): ModelFiles {
  const base = new NodeDirSource(dir);
  return {
    where: `${base.where} (patched preprocessor_config.json)`,
    async readText(name) {
      const text = await base.readText(name);
      if (name !== 'preprocessor_config.json' || text === undefined) return text;
      return JSON.stringify({ ...JSON.parse(text), ...patch });
    },
  };
}

function diffStats(a: Float32Array, b: Float32Array): { max: number; mean: number } {
  let max = 0;
  let sum = 0;
  for (let i = 0; i < a.length; i++) {
    const d = Math.abs(a[i]! - b[i]!);
    if (d > max) max = d;
    sum += d;
  }
  return { max, mean: sum / a.length };
}

type TjsProcessor = Awaited<ReturnType<typeof AutoProcessor.from_pretrained>>;

async function runTjs(tjs: TjsProcessor, bytes: Uint8Array, options: Record<string, unknown> = {}) {
  const text = tjs.apply_chat_template(
    [{ role: 'user', content: [{ type: 'image' }, { type: 'text', text: PROMPT }] }] as never,
    { add_generation_prompt: true } as never,
  ) as unknown as string;
  const image = await RawImage.fromBlob(new Blob([bytes as Uint8Array<ArrayBuffer>]));
  const out = await tjs(text, [image], options);
  return {
    ids: Array.from(out.input_ids.data as BigInt64Array, Number),
    pixels: out.pixel_values.data as Float32Array,
    dims: out.pixel_values.dims as number[],
  };
}

const messagesFor = (bytes: Uint8Array): ChatMessage[] => [
  {
    role: 'user',
    content: [
      { type: 'image', image: bytes },
      { type: 'text', text: PROMPT },
    ],
  },
];

describe('parity with transformers.js Idefics3Processor', () => {
  beforeAll(() => {
    // The tiny checkpoint is git-ignored and deterministic; make it if this clone has none.
    if (!existsSync(resolve(ROOT, 'public/models/manifest.json'))) makeTiny(resolve(ROOT, 'public/models'));
    env.allowRemoteModels = false;
    env.allowLocalModels = true;
    env.localModelPath = `${ROOT}/`;
  });

  const images: Array<[string, () => Promise<Uint8Array>]> = [
    ['sample.png 640x480', async () => new Uint8Array(readFileSync(resolve(ROOT, 'public/sample.png')))],
    ['portrait 480x640', () => makeImage(480, 640)],
    ['square 512x512', () => makeImage(512, 512)],
    ['tiny 20x30', () => makeImage(20, 30)],
    ['1x1', () => makeImage(1, 1)],
    ['wide 1000x333', () => makeImage(1000, 333)],
  ];
  const expectedTiles: Record<string, number> = {
    'sample.png 640x480': 13,
    'portrait 480x640': 13,
    'square 512x512': 17,
    'tiny 20x30': 13,
    '1x1': 17,
    'wide 1000x333': 9,
  };

  for (const dir of [REAL, TINY]) {
    describe(dir, () => {
      let mine: Idefics3Processor;
      let tjs: TjsProcessor;
      beforeAll(async () => {
        mine = await Idefics3Processor.load(new NodeDirSource(resolve(ROOT, dir)), { decodeImage: decodeImageNode });
        tjs = await AutoProcessor.from_pretrained(dir);
      });

      for (const [name, make] of images) {
        it(`${name}: identical token ids, ${expectedTiles[name]} tiles, pixels within tolerance`, async () => {
          const bytes = await make();
          const { plan, images: processed } = await mine.prepare(messagesFor(bytes));
          const ref = await runTjs(tjs, bytes);
          expect(Array.from(plan.tokenIds)).toEqual(ref.ids);
          const im = processed[0]!;
          const T = im.layout.tileSize;
          expect(im.layout.numTiles).toBe(expectedTiles[name]);
          expect(ref.dims).toEqual([1, im.layout.numTiles, 3, T, T]);
          expect(plan.placeholders[0]!.length).toBe(im.layout.numTiles * mine.config.imageSeqLen);
          const s = diffStats(im.pixelValues, ref.pixels);
          console.log(
            `${dir} ${name}: ${ref.ids.length} tokens identical; pixels vs transformers.js max ${s.max.toFixed(4)} mean ${s.mean.toFixed(5)}`,
          );
          expect(s.max).toBeLessThanOrEqual(PIXEL_MAX_ABS);
          expect(s.mean).toBeLessThanOrEqual(PIXEL_MEAN_ABS);
        }, 30_000);
      }

      it('640x480 with do_image_splitting = false: one tile, identical tokens', async () => {
        const bytes = new Uint8Array(readFileSync(resolve(ROOT, 'public/sample.png')));
        const noSplit = await Idefics3Processor.load(withPreprocessor(resolve(ROOT, dir), { do_image_splitting: false }), {
          decodeImage: decodeImageNode,
        });
        const { plan, images: processed } = await noSplit.prepare(messagesFor(bytes));
        const ref = await runTjs(tjs, bytes, { do_image_splitting: false });
        expect(Array.from(plan.tokenIds)).toEqual(ref.ids);
        expect(processed[0]!.layout.numTiles).toBe(1);
        expect(plan.placeholders[0]!.runs).toHaveLength(1);
        const s = diffStats(processed[0]!.pixelValues, ref.pixels);
        console.log(`${dir} no-split 640x480: pixels vs transformers.js max ${s.max.toFixed(4)} mean ${s.mean.toFixed(5)}`);
        expect(s.max).toBeLessThanOrEqual(PIXEL_MAX_ABS);
        expect(s.mean).toBeLessThanOrEqual(PIXEL_MEAN_ABS);
      }, 30_000);
    });
  }
});

describe('PIL golden of the tiny checkpoint (test/fixtures/goldens)', () => {
  it.skipIf(!existsSync(GOLDEN_TILES))('sample.png uint8 tiles [13, 3, 128, 128] equal the PyTorch/PIL golden exactly', async () => {
    if (!existsSync(resolve(ROOT, 'public/models/manifest.json'))) makeTiny(resolve(ROOT, 'public/models'));
    const p = await Idefics3Processor.load(new NodeDirSource(resolve(ROOT, TINY)), { decodeImage: decodeImageNode });
    const bytes = new Uint8Array(readFileSync(resolve(ROOT, 'public/sample.png')));
    const { plan, images } = await p.prepare(messagesFor(bytes));
    const golden = new Uint8Array(readFileSync(GOLDEN_TILES));
    const got = images[0]!.tilesU8;
    expect(got.length).toBe(golden.length);
    let numDiff = 0;
    let maxDiff = 0;
    for (let i = 0; i < golden.length; i++) {
      const d = Math.abs(got[i]! - golden[i]!);
      if (d) numDiff++;
      maxDiff = Math.max(maxDiff, d);
    }
    console.log(`tiny tiles vs PIL golden: ${numDiff} of ${golden.length} values differ, max ${maxDiff}`);
    expect(maxDiff).toBe(0);
    if (existsSync(GOLDEN_INPUT)) {
      const input = JSON.parse(readFileSync(GOLDEN_INPUT, 'utf8')) as { input_ids: number[] };
      expect(Array.from(plan.tokenIds)).toEqual(input.input_ids);
    }
  });
});
