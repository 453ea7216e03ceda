// Audio chunks as HF's VoxtralProcessor and vLLM make them (src/encoder/audio/prepare-audio.ts, 'whole-clip',
// the default): the log-mel of the whole clip cut into 30-second chunks, against the float64 reference
// (test/reference/log_mel.py) at the frames that read both sides of a chunk edge and at the clip's end; and
// the chunk keys, which must name everything a chunk's features depend on: a repeated clip hits every chunk,
// a recording that grows keeps a chunk whose window and floor did not change, and never one whose features
// did change (checked on every prefix of a clip whose floor moves).

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { quietClip, testClip } from '../helpers/audio-clips';
import { extractorOf, intakeChunks, type IntakeChunk } from '../helpers/audio-intake';

const root = join(import.meta.dirname, '../..');
const goldens = join(root, 'test/fixtures/goldens/audio');
const extractor = extractorOf(join(root, 'test/fixtures/models/Voxtral-Mini-3B-2507'));
const SR = 16000;
const FRAMES = 3000;
const MEL = 128;

/** Frame `t` of the whole clip, [MEL], from its chunks. */
function frame(chunks: IntakeChunk[], t: number): Float32Array {
  const c = chunks[Math.floor(t / FRAMES)]!.features;
  const f = t % FRAMES;
  return Float32Array.from({ length: MEL }, (_, m) => c[m * FRAMES + f]!);
}

const equalBits = (a: Float32Array, b: Float32Array) => a.length === b.length && a.every((v, i) => Object.is(v, b[i]));

describe('whole-clip features', () => {
  it('a 41 s clip, loud across its chunk edge and quiet after: the reference at the edge and at the end, within 1e-6', {
    timeout: 120_000,
  }, async () => {
    const manifest = JSON.parse(readFileSync(join(goldens, 'log-mel.json'), 'utf8'));
    const g = manifest.whole_clip_cases['whole-41-quiet-128'] as { seconds: number; stored_ranges: Array<[number, number]> };
    const chunks = await intakeChunks(extractor, quietClip(g.seconds, SR));
    expect(chunks).toHaveLength(2);
    const bytes = readFileSync(join(goldens, 'log-mel-whole-41-quiet-128.f32.bin'));
    const want = new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4);
    const stored = g.stored_ranges.reduce((a, [s, e]) => a + e - s, 0);
    let col = 0;
    let worst = 0;
    for (const [start, end] of g.stored_ranges) {
      for (let t = start; t < end; t++, col++) {
        const got = frame(chunks, t);
        for (let m = 0; m < MEL; m++) worst = Math.max(worst, Math.abs(got[m]! - want[m * stored + col]!));
      }
    }
    // Raw values stay float64 until the floor, as in the reference: equal here, a last-bit rounding apart at most.
    expect(worst).toBeLessThan(1e-6);
    // The clip's floor, not the quiet chunk's own: per-chunk features of that chunk differ a lot.
    const perChunk = await intakeChunks(extractor, quietClip(g.seconds, SR), 'per-chunk');
    let apart = 0;
    for (let i = 0; i < perChunk[1]!.features.length; i++) {
      apart = Math.max(apart, Math.abs(perChunk[1]!.features[i]! - chunks[1]!.features[i]!));
    }
    expect(apart).toBeGreaterThan(0.5);
  });

  it('per-chunk features (the explicit option) are each chunk on its own, keyed by its samples', { timeout: 120_000 }, async () => {
    const pcm = testClip(35, SR);
    const chunks = await intakeChunks(extractor, pcm, 'per-chunk');
    expect(equalBits(chunks[0]!.features, extractor.extract(pcm.subarray(0, 480000)))).toBe(true);
    expect(equalBits(chunks[1]!.features, extractor.extract(pcm.subarray(480000)))).toBe(true);
    const whole = await intakeChunks(extractor, pcm);
    expect(whole.map((c) => c.key)).not.toEqual(chunks.map((c) => c.key));
  });
});

describe('whole-clip chunk keys', () => {
  it('a repeated clip hits every chunk', { timeout: 120_000 }, async () => {
    const pcm = quietClip(41, SR);
    const [a, b] = [await intakeChunks(extractor, pcm), await intakeChunks(extractor, pcm.slice())];
    expect(b.map((c) => c.key)).toEqual(a.map((c) => c.key));
  });

  it('a recording grown with quieter audio keeps its first chunk; the chunk it ended in changes', { timeout: 120_000 }, async () => {
    const minute = quietClip(60, SR, 40, 0.5, 0.3);
    const first = await intakeChunks(extractor, minute.subarray(0, 45 * SR));
    const grown = await intakeChunks(extractor, minute);
    expect(grown[0]!.key).toBe(first[0]!.key);
    expect(equalBits(grown[0]!.features, first[0]!.features)).toBe(true);
    expect(grown[1]!.key).not.toBe(first[1]!.key);
  });

  it('louder audio later moves the floor: a chunk it clamps is keyed anew, and its features did change', { timeout: 120_000 }, async () => {
    // 30 s whose second half is quiet (so the floor clamps it), then a louder minute.
    const clip = quietClip(60, SR, 15, 0.5, 0.001);
    const loud = testClip(60, SR);
    for (let i = 30 * SR; i < clip.length; i++) clip[i] = loud[i]! * 1.5;
    const first = await intakeChunks(extractor, clip.subarray(0, 30 * SR));
    const grown = await intakeChunks(extractor, clip);
    expect(grown[0]!.key).not.toBe(first[0]!.key);
    expect(equalBits(grown[0]!.features, first[0]!.features)).toBe(false);
  });

  it('never the same key for different features: every 5 s prefix of a clip whose loudness changes', { timeout: 300_000 }, async () => {
    const pcm = quietClip(95, SR, 50, 2, 0.05);
    for (let i = 70 * SR; i < 80 * SR; i++) pcm[i] = pcm[i]! * 40; // a loud stretch late: the floor moves
    const seen = new Map<string, Float32Array>();
    let hits = 0;
    let chunks = 0;
    for (let seconds = 5; seconds <= 95; seconds += 5) {
      for (const c of await intakeChunks(extractor, pcm.subarray(0, seconds * SR))) {
        chunks++;
        const before = seen.get(c.key);
        if (before) {
          hits++;
          expect(equalBits(before, c.features), `chunk keyed ${c.key} at ${seconds} s`).toBe(true);
        }
        seen.set(c.key, c.features);
      }
    }
    expect(hits).toBeGreaterThan(0);
    expect(hits).toBeLessThan(chunks);
  });
});
