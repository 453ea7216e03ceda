// Audio requests through the engine (Node, encoder in-process): Voxtral's transcription and chat prompts
// on the tiny checkpoint, answered with the PyTorch reference's tokens; the chunk-level encoder cache (a
// repeat encodes nothing, a recording that grew encodes only its new chunk); and bad audio failing alone
// with named errors while the next request is served. (Audio to an image checkpoint: video.test.ts, which
// has one loaded.)

import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../src/engine/engine';
import { AudioDecodeError, AudioTooLongError, ContextLengthError, ImageNotSupportedError, InvalidMessageError } from '../../src/errors';
import { quietClip, testClip, wavBytes } from '../helpers/audio-clips';
import { GOLDEN_DIR } from '../helpers/goldens';
import { testEngine } from '../helpers/engine';
import { ensureTinyModels } from '../helpers/tiny-models';
import { useGpu } from './gpu';

const gpu = useGpu();
const golden = JSON.parse(readFileSync(resolve(GOLDEN_DIR, 'audio/voxtral.json'), 'utf8')).cases['voxtral-tiny'] as {
  greedy: number[];
  seconds: number;
};
const SAMPLE = readFileSync(resolve(import.meta.dirname, '../../public/sample.png'));

let engine: Engine;
let dir: string;
let tmp: string;
beforeAll(async () => {
  dir = ensureTinyModels();
  tmp = mkdtempSync(join(tmpdir(), 'tessera-audio-engine-'));
  engine = await testEngine(gpu(), `${dir}/voxtral-tiny`, { kvCacheTokens: 2048, maxTokensPerStep: 256 });
  return () => engine.destroy();
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const ask = (audio: unknown, text = 'What is this?', max_tokens = 6) =>
  engine.chat.completions.create({
    messages: [
      {
        role: 'user',
        content: [
          { type: 'audio', audio: audio as Uint8Array },
          { type: 'text', text },
        ],
      },
    ],
    max_tokens,
  });

describe('Voxtral in the engine', () => {
  it("transcribes the golden clip (a float WAV at 16 kHz) with the reference's 20 greedy tokens", async () => {
    const wav = wavBytes(testClip(golden.seconds, 16000), 16000);
    const t = await engine.audio.transcriptions.create({ file: wav, language: 'en', max_tokens: 20 });
    expect(t.tessera.tokenIds).toEqual(golden.greedy);
    expect(t.text).toBe(engine.processor.decode(golden.greedy));
    expect(t.usage.input_tokens).toBe(3 + 375 + 1 + 3 + 1);
    expect(t.tessera.audios).toHaveLength(1);
    expect(t.tessera.audios[0]).toMatchObject({ decoder: 'wav', format: 'wav', sampleRate: 16000, channels: 1, tokens: 375 });
    expect(t.tessera.audios[0].duration).toBeCloseTo(golden.seconds, 6);
    // Streamed: the same text in deltas, then the whole.
    const events = [];
    for await (const e of await engine.audio.transcriptions.create({ file: wav, language: 'en', max_tokens: 20, stream: true }))
      events.push(e);
    const done = events.at(-1)!;
    expect(done.type).toBe('transcript.text.done');
    expect(
      events
        .slice(0, -1)
        .map((e) => (e.type === 'transcript.text.delta' ? e.delta : ''))
        .join(''),
    ).toBe(t.text);
  });

  it('asking again encodes 0 chunks; a recording that grew keeps the chunks whose window and floor did not change', async () => {
    // Whole-clip features: chunk 0's frames read up to 40 samples into chunk 1, and the floor is the clip's.
    // 45 s grown to 60 s with quieter audio: chunk 0's window and the floor stay, chunk 1 changes.
    const minute = quietClip(60, 16000, 40, 0.5, 0.3);
    const first = wavBytes(minute.subarray(0, 45 * 16000), 16000);
    const a = await ask(first);
    expect(a.tessera.media.map((m) => m.audio)).toEqual([
      { audioIndex: 0, chunk: 0 },
      { audioIndex: 0, chunk: 1 },
    ]);
    const before = engine.stats().encoder.encodes;
    const again = await ask(first);
    expect(again.tessera.media.map((m) => m.source)).toEqual(['memory', 'memory']);
    expect(engine.stats().encoder.encodes).toBe(before);
    const grown = await ask(wavBytes(minute, 16000));
    expect(grown.tessera.media.map((m) => m.source)).toEqual(['memory', 'encoded']);
    expect(grown.tessera.audios[0].chunks.map((c) => c.start)).toEqual([0, 30]);
    expect(engine.stats().encoder.encodes).toBe(before + 1);
    expect(grown.choices[0].message.content.length).toBeGreaterThan(0);
  });

  it("with media.audioFeatures 'per-chunk' a chunk is keyed by its own samples: 30 s grown to 60 s keeps the first", async () => {
    const live = await testEngine(gpu(), `${dir}/voxtral-tiny`, {
      kvCacheTokens: 2048,
      maxTokensPerStep: 256,
      media: { audioFeatures: 'per-chunk' },
    });
    try {
      const minute = testClip(60, 16000);
      const question = (audio: Uint8Array) =>
        live.chat.completions.create({
          messages: [
            {
              role: 'user',
              content: [
                { type: 'audio', audio },
                { type: 'text', text: 'What is this?' },
              ],
            },
          ],
          max_tokens: 3,
        });
      await question(wavBytes(minute.subarray(0, 480000), 16000));
      const grown = await question(wavBytes(minute, 16000));
      expect(grown.tessera.media.map((m) => m.source)).toEqual(['memory', 'encoded']);
    } finally {
      live.destroy();
    }
  });

  it('requests that end before their audio is encoded leave no features prepared in the encoder; one beside them with the same audio is answered', async () => {
    const prepared = () => (engine.waitState() as { encoder: { prepared: number } }).encoder.prepared;
    expect(prepared()).toBe(0);
    const clips = Array.from({ length: 6 }, (_, i) => wavBytes(testClip(1 + i * 0.25, 16000), 16000));
    // Aborted a moment after they start: some while decoding, some waiting for their encode.
    await Promise.all(
      clips.map(async (wav, i) => {
        const abort = new AbortController();
        setTimeout(() => abort.abort(new Error('gone')), 20 + 15 * i);
        await engine.chat.completions
          .create({ messages: [{ role: 'user', content: [{ type: 'audio', audio: wav }] }], max_tokens: 30, signal: abort.signal })
          .catch(() => undefined);
      }),
    );
    expect(prepared()).toBe(0);
    // The same new clip asked twice at once, one of the two cancelled: the other still gets its answer.
    const shared = wavBytes(testClip(2.75, 16000), 16000);
    const abort = new AbortController();
    const cancelled = engine.chat.completions
      .create({ messages: [{ role: 'user', content: [{ type: 'audio', audio: shared }] }], max_tokens: 4, signal: abort.signal })
      .catch((e: unknown) => e);
    const kept = ask(shared, 'What is this?', 4);
    setTimeout(() => abort.abort(new Error('gone')), 30);
    await cancelled;
    expect((await kept).tessera.tokenIds).toHaveLength(4);
    expect(prepared()).toBe(0);
  });

  it('takes input_audio (base64), audio_url (data:), PCM (stereo at 44.1 kHz) and MP3 through ffmpeg', async () => {
    const clip = testClip(2, 16000);
    const wav = wavBytes(clip, 16000, 's16');
    const b64 = Buffer.from(wav).toString('base64');
    for (const part of [
      { type: 'input_audio', input_audio: { data: b64, format: 'wav' } },
      { type: 'audio_url', audio_url: { url: `data:audio/wav;base64,${b64}` } },
    ]) {
      const r = await engine.chat.completions.create({
        messages: [{ role: 'user', content: [part as never, { type: 'text', text: 'Hi' }] }],
        max_tokens: 2,
      });
      expect(r.tessera.audios[0]).toMatchObject({ decoder: 'wav', tokens: 375 });
    }
    const stereo = new Float32Array(2 * 44100);
    const tone = testClip(1, 44100);
    for (let i = 0; i < tone.length; i++) [stereo[2 * i], stereo[2 * i + 1]] = [tone[i], tone[i]];
    const pcm = await ask({ pcm: stereo, sampleRate: 44100, channels: 2 });
    expect(pcm.tessera.audios[0]).toMatchObject({ decoder: 'pcm', sampleRate: 44100, channels: 2 });
    expect(pcm.tessera.audios[0].duration).toBeCloseTo(1, 3);
    const mp3 = join(tmp, 'clip.mp3');
    execFileSync('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', 'sine=frequency=440:duration=3', '-ac', '2', '-ar', '44100', mp3]);
    const r = await ask(readFileSync(mp3));
    expect(r.tessera.audios[0]).toMatchObject({ decoder: 'ffmpeg', format: 'mp3', sampleRate: 44100, channels: 2 });
  });

  it('bad audio fails alone, by name, and the next request is served', async () => {
    const wav = wavBytes(testClip(1, 16000), 16000, 's16');
    await expect(ask(new Uint8Array(0))).rejects.toThrow(AudioDecodeError);
    await expect(ask(wav.subarray(0, 30))).rejects.toThrow(AudioDecodeError); // truncated header
    await expect(ask(SAMPLE)).rejects.toThrow(AudioDecodeError); // not audio (ffmpeg refuses a PNG as audio)
    await expect(ask(Uint8Array.from({ length: 4000 }, (_, i) => (i * 7919) % 251))).rejects.toThrow(AudioDecodeError); // corrupt
    const nan = testClip(1, 16000);
    nan[12345] = Number.NaN;
    await expect(ask({ pcm: nan, sampleRate: 16000 })).rejects.toThrow(/not a number \(NaN\) at 0\.772 s/);
    await expect(ask({ pcm: new Float32Array(100), sampleRate: 0 })).rejects.toThrow(AudioDecodeError);
    await expect(ask({ pcm: new Float32Array(0), sampleRate: 16000 })).rejects.toThrow(/no samples/);
    await expect(
      engine.chat.completions.create({ messages: [{ role: 'user', content: [{ type: 'image', image: SAMPLE }] }], max_tokens: 2 }),
    ).rejects.toThrow(ImageNotSupportedError);
    await expect(engine.audio.transcriptions.create({ file: wav, language: 'english' })).rejects.toThrow(InvalidMessageError);
    const ok = await ask(wav);
    expect(ok.choices[0].finish_reason).toBeDefined();
    expect(engine.stats().kv.numFreeBlocks).toBe(engine.stats().kv.numBlocks);
  });

  it('a 2-hour file is refused after a few chunks with the context limit named, in bounded memory', async () => {
    // Two hours of FLAC silence (1.3 MB, made in under a second): decoded through ffmpeg, as a stream.
    const long = join(tmp, 'two-hours.flac');
    execFileSync('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', 'anullsrc=r=8000:cl=mono', '-t', '7200', '-c:a', 'flac', long]);
    const rss = process.memoryUsage().rss;
    const t0 = performance.now();
    const err = await ask(readFileSync(long)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AudioTooLongError);
    expect((err as AudioTooLongError).contextWindow).toBe(2048);
    expect((err as Error).message).toMatch(/longer than 150 s .*context window is 2048 tokens/);
    expect(performance.now() - t0).toBeLessThan(30_000);
    expect(process.memoryUsage().rss - rss).toBeLessThan(300 * 2 ** 20);
    // Under the window per part, over it together: the plan's check names the numbers.
    const twoMinutes = wavBytes(testClip(120, 16000), 16000, 's16');
    await expect(
      engine.chat.completions.create({
        messages: [
          {
            role: 'user',
            content: [
              { type: 'audio', audio: twoMinutes },
              { type: 'audio', audio: twoMinutes },
            ],
          },
        ],
        max_tokens: 8,
      }),
    ).rejects.toThrow(ContextLengthError);
  });
});

describe('Voxtral with its encoder in a worker thread', () => {
  it('transcribes with the same tokens; a bad file fails by name across the worker boundary', async () => {
    const worker = await testEngine(gpu(), `${dir}/voxtral-tiny`, { kvCacheTokens: 1024, workers: true });
    try {
      const wav = wavBytes(testClip(golden.seconds, 16000), 16000);
      const t = await worker.audio.transcriptions.create({ file: new Blob([wav]), language: 'en', max_tokens: 20 });
      expect(t.tessera.tokenIds).toEqual(golden.greedy);
      expect(worker.stats().encoder.mode).toBe('workers');
      await expect(
        worker.chat.completions.create({
          messages: [{ role: 'user', content: [{ type: 'audio', audio: new Uint8Array(10) }] }],
          max_tokens: 2,
        }),
      ).rejects.toThrow(AudioDecodeError);
      const again = await worker.audio.transcriptions.create({
        file: { pcm: testClip(golden.seconds, 16000), sampleRate: 16000 },
        language: 'en',
        max_tokens: 20,
      });
      expect(again.tessera.media.map((m) => m.source)).toEqual(['memory']);
    } finally {
      worker.destroy();
    }
  });
});
