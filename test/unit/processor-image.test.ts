// Image side of the processor: PIL-exact resampling and compositing, layouts and token counts from sizes
// alone, decoding (bad bytes, 1x1, alpha, grayscale) and bounded memory on a 10000 x 10000 image.

import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import sharp from 'sharp';
import { beforeAll, describe, expect, it } from 'vitest';
import { crc32 } from 'node:zlib';
import { ImageDecodeError, ImageTooLargeError } from '../../src/errors';
import {
  imageLayout,
  normalizeTiles,
  resampleRgb,
  shrinkTarget,
  toRgb,
  type Idefics3Processor,
  type ImageProcessorConfig,
  type ResampleFilter,
} from '../../src/processor/index';
import { decodeImageNode, loadProcessorFromDirectory } from '../../src/processor/node';

const ROOT = resolve(import.meta.dirname, '../..');
const REAL_DIR = resolve(ROOT, 'test/fixtures/models/SmolVLM-256M-Instruct');
const fromB64 = (s: string): Uint8Array => new Uint8Array(Buffer.from(s, 'base64'));

interface PilFixture {
  pillow: string;
  resize: Array<{ width: number; height: number; outWidth: number; outHeight: number; filter: ResampleFilter; src: string; out: string }>;
  composite: { width: number; height: number; rgba: string; rgb: string };
}
const PIL_FIXTURE = JSON.parse(readFileSync(resolve(import.meta.dirname, 'fixtures-processor/pil-resample.json'), 'utf8')) as PilFixture;

describe('resampleRgb (Pillow Resample.c)', () => {
  for (const c of PIL_FIXTURE.resize) {
    it(`${c.filter} ${c.width}x${c.height} -> ${c.outWidth}x${c.outHeight} equals Pillow ${PIL_FIXTURE.pillow} bit for bit`, () => {
      const got = resampleRgb({ width: c.width, height: c.height, data: fromB64(c.src) }, c.outWidth, c.outHeight, c.filter);
      expect(got.width).toBe(c.outWidth);
      expect(got.height).toBe(c.outHeight);
      expect(Buffer.from(got.data).equals(Buffer.from(fromB64(c.out)))).toBe(true);
    });
  }

  it('returns a copy for the same size, like Pillow', () => {
    const src = { width: 2, height: 1, data: new Uint8Array([1, 2, 3, 4, 5, 6]) };
    const got = resampleRgb(src, 2, 1, 'lanczos');
    expect(Array.from(got.data)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(got.data).not.toBe(src.data);
  });
});

describe('toRgb (HF convert_to_rgb: alpha over white)', () => {
  it('equals Pillow alpha_composite over white for every alpha', () => {
    const c = PIL_FIXTURE.composite;
    const got = toRgb({ width: c.width, height: c.height, channels: 4, data: fromB64(c.rgba) });
    expect(Buffer.from(got.data).equals(Buffer.from(fromB64(c.rgb)))).toBe(true);
  });

  it('expands gray and gray+alpha', () => {
    expect(Array.from(toRgb({ width: 1, height: 1, channels: 1, data: new Uint8Array([9]) }).data)).toEqual([9, 9, 9]);
    expect(Array.from(toRgb({ width: 1, height: 1, channels: 2, data: new Uint8Array([9, 0]) }).data)).toEqual([255, 255, 255]);
  });
});

describe('imageLayout: tiles and tokens from the size alone', () => {
  let real: Idefics3Processor;
  beforeAll(async () => {
    real = await loadProcessorFromDirectory(REAL_DIR);
  });

  // Expected values follow HF Idefics3ImageProcessor by hand: longest edge -> 2048 (even short side),
  // sides -> multiples of 512, tiles = rows * cols + 1, 64 tokens per tile.
  const cases: Array<[number, number, number, number, number]> = [
    // w, h, rows, cols, tokens
    [640, 480, 3, 4, 13 * 64],
    [480, 640, 4, 3, 13 * 64],
    [512, 512, 4, 4, 17 * 64],
    [1, 1, 4, 4, 17 * 64],
    [20, 30, 4, 3, 13 * 64],
    [1000, 333, 2, 4, 9 * 64],
    [10000, 10000, 4, 4, 17 * 64],
    [4000, 10, 1, 4, 5 * 64],
  ];
  for (const [w, h, rows, cols, tokens] of cases) {
    it(`${w}x${h} -> ${rows}x${cols} grid, ${tokens} image tokens`, () => {
      const l = real.imageLayout(w, h);
      expect([l.rows, l.cols, l.numImageTokens]).toEqual([rows, cols, tokens]);
      expect(l.numTiles).toBe(rows * cols + 1);
    });
  }

  it('20x30 rounds the odd short side up to even (1365 -> 1366), as HF does', () => {
    expect(real.imageLayout(20, 30).resized).toEqual({ width: 1366, height: 2048 });
  });

  it('without splitting an image is one tile', () => {
    const cfg: ImageProcessorConfig = { ...real.config.image, doImageSplitting: false };
    const l = imageLayout(640, 480, cfg, 64);
    expect([l.rows, l.cols, l.numTiles, l.numImageTokens]).toEqual([0, 0, 1, 64]);
  });
});

describe('decoding and processing', () => {
  let real: Idefics3Processor;
  beforeAll(async () => {
    real = await loadProcessorFromDirectory(REAL_DIR);
  });

  it('bytes that are not an image -> ImageDecodeError saying so', async () => {
    const bad = new TextEncoder().encode('definitely not a PNG');
    await expect(real.processImage(bad)).rejects.toBeInstanceOf(ImageDecodeError);
    await expect(real.processImage(bad)).rejects.toThrow(/could not be decoded as an image/);
    await expect(real.processImage(new Uint8Array(0))).rejects.toThrow(/0 bytes/);
    // A truncated PNG is also a decode error, not a crash.
    const png = readFileSync(resolve(ROOT, 'public/sample.png'));
    await expect(real.processImage(new Uint8Array(png.subarray(0, 200)))).rejects.toBeInstanceOf(ImageDecodeError);
  });

  it('an image whose header claims 20000x20000 -> ImageTooLargeError before any pixel is decoded', async () => {
    const png = Buffer.from(
      await sharp(Buffer.from([1, 2, 3]), { raw: { width: 1, height: 1, channels: 3 } })
        .png()
        .toBuffer(),
    );
    png.writeUInt32BE(20000, 16); // IHDR width
    png.writeUInt32BE(20000, 20); // IHDR height
    png.writeUInt32BE(crc32(png.subarray(12, 29)) >>> 0, 29);
    await expect(real.processImage(new Uint8Array(png))).rejects.toBeInstanceOf(ImageTooLargeError);
    await expect(real.processImage(new Uint8Array(png))).rejects.toThrow(/20000x20000/);
  });

  it('EXIF orientation is applied (a 40x20 JPEG tagged "rotate 90" is 20x40), as HF load_image does', async () => {
    const jpg = await sharp(Buffer.alloc(40 * 20 * 3, 128), { raw: { width: 40, height: 20, channels: 3 } })
      .jpeg()
      .withMetadata({ orientation: 6 })
      .toBuffer();
    const d = await decodeImageNode(new Uint8Array(jpg));
    expect([d.width, d.height, d.sourceWidth, d.sourceHeight]).toEqual([20, 40, 20, 40]);
  });

  it('a 1x1 image works (17 tiles of one colour)', async () => {
    const png = await sharp(Buffer.from([10, 200, 30]), { raw: { width: 1, height: 1, channels: 3 } })
      .png()
      .toBuffer();
    const im = await real.processImage(new Uint8Array(png));
    expect(im.layout.numTiles).toBe(17);
    expect(im.pixelValues.length).toBe(17 * 3 * 512 * 512);
    const plane = 512 * 512;
    expect([im.tilesU8[0], im.tilesU8[plane], im.tilesU8[2 * plane]]).toEqual([10, 200, 30]);
    expect(im.tilesU8.every((v, i) => v === [10, 200, 30][Math.floor(i / plane) % 3])).toBe(true);
    expect(im.pixelMask).toBeNull();
  });

  it('transparent pixels come out white; normalisation is numpy float32', async () => {
    const png = await sharp(Buffer.from([0, 0, 0, 0]), { raw: { width: 1, height: 1, channels: 4 } })
      .png()
      .toBuffer();
    const decoded = await decodeImageNode(new Uint8Array(png));
    expect(decoded.channels).toBe(4);
    const im = await real.processImage(new Uint8Array(png));
    expect(im.tilesU8.every((v) => v === 255)).toBe(true);
    // (255 * (1/255) - 0.5) / 0.5 in float32
    expect(im.pixelValues[0]).toBe(Math.fround(Math.fround(Math.fround(255 * 0.00392156862745098) - 0.5) / 0.5));
    const lut = normalizeTiles(new Uint8Array([0, 128, 255]), 1, real.config.image);
    expect(Array.from(lut)).toEqual([-1, Math.fround(Math.fround(Math.fround(128 / 255) - 0.5) / 0.5), 1]);
  });

  it('decoded pixels can be passed instead of bytes', async () => {
    const im = await real.processImage({ width: 2, height: 1, channels: 3, data: new Uint8Array([0, 0, 0, 255, 255, 255]) });
    // 2x1 -> 2048x1024 -> a 2 x 4 grid + the global image.
    expect([im.layout.rows, im.layout.cols, im.layout.numTiles]).toEqual([2, 4, 9]);
  });

  it('a 10000x10000 image is shrunk while decoding: bounded memory, same layout as the full image', async () => {
    const png = await sharp({ create: { width: 10000, height: 10000, channels: 3, background: { r: 200, g: 100, b: 50 } } })
      .png({ compressionLevel: 6 })
      .toBuffer();
    expect(shrinkTarget({ width: 10000, height: 10000 }, real.config.image)).toEqual({ width: 4096, height: 4096 });
    const base = process.memoryUsage.rss();
    let peak = base;
    const timer = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage.rss());
    }, 5);
    const t0 = performance.now();
    const im = await real.processImage(new Uint8Array(png));
    clearInterval(timer);
    peak = Math.max(peak, process.memoryUsage.rss());
    const peakMb = (peak - base) / 2 ** 20;
    console.log(`10000x10000 PNG (${png.length} bytes): ${(performance.now() - t0).toFixed(0)} ms, peak RSS +${peakMb.toFixed(0)} MB`);
    expect(im.layout.source).toEqual({ width: 10000, height: 10000 });
    expect(im.layout.numTiles).toBe(17);
    const plane = 512 * 512;
    expect([im.tilesU8[0], im.tilesU8[plane], im.tilesU8[2 * plane]]).toEqual([200, 100, 50]);
    // A full decode alone would be 300 MB (RGB) to 400 MB (RGBA); the shrunk path peaked near 120 MB here.
    expect(peakMb).toBeLessThan(250);
  }, 60_000);
});
