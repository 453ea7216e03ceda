// `npm run bench:audio`: audio asked about in headless Chromium on the Voxtral layout with a Whisper-small-sized
// encoder and a SmolLM2-135M-sized decoder (random weights, bench/audio/audio-model.ts): decode + resample ms
// (WebCodecs, in the encoder worker), log-mel ms, encode ms per 30-second chunk, TTFT and decode tokens/s for a
// 30 s MP3; the same file again (its chunk from the cache); a 30 s recording and then the same recording grown
// to 60 s (only the new chunk is encoded). Prints a table and ends with ONE JSON line holding every figure.
//
// Flags: --tokens=N (decode tokens, default 32)  --timeout-min=N (default 60)

import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { testClip, wavBytes } from '../../test/helpers/audio-clips';
import { openBenchBrowser, runBenchPage } from '../harness/browser';
import { table } from '../harness/table';
import { AUDIO_BENCH_MODEL_DIR, AUDIO_BENCH_SHAPE, ensureAudioBenchModel } from './audio-model';

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = join(here, '../..');
const log = (line: string) => console.log(`[bench] ${line}`);
const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
const tokens = Number(arg('tokens') ?? 32);
const timeoutMs = Number(arg('timeout-min') ?? 60) * 60_000;

/**
 * The clips (deterministic: test/helpers/audio-clips.ts's tone, chirp and noise): a 30 s MP3 at 44.1 kHz
 * stereo (decoded and resampled), a 2 s warm-up WAV, and a 16 kHz recording as 30 s and grown to 60 s (its
 * first 30 s the same samples).
 */
function makeClips(dir: string): void {
  mkdirSync(dir, { recursive: true });
  const wav = (file: string, seconds: number, rate: number) => {
    if (!existsSync(join(dir, file))) writeFileSync(join(dir, file), wavBytes(testClip(seconds, rate), rate, 's16'));
  };
  wav('warm-2s.wav', 2, 16000);
  wav('rec-60s.wav', 60, 16000);
  if (!existsSync(join(dir, 'rec-30s.wav')))
    writeFileSync(join(dir, 'rec-30s.wav'), wavBytes(testClip(60, 16000).subarray(0, 480000), 16000, 's16'));
  wav('src-30s-44k.wav', 30, 44100);
  if (!existsSync(join(dir, 'clip-30s.mp3'))) {
    execFileSync('ffmpeg', [
      '-hide_banner',
      '-loglevel',
      'error',
      '-i',
      join(dir, 'src-30s-44k.wav'),
      '-ac',
      '2',
      '-b:a',
      '128k',
      '-y',
      join(dir, 'clip-30s.mp3'),
    ]);
  }
}

interface Phase {
  promptTokens: number;
  audioTokens: number;
  seconds: number;
  format: string;
  decoder: string;
  sampleRate: number;
  channels: number;
  chunks: number;
  chunksEncoded: number;
  chunkSources: string[];
  decodeMs: number;
  featuresMs: number;
  encodeMs: number;
  encodeMsPerChunk: number;
  prefillMs: number;
  ttftMs: number;
  decodeTokensPerSecond: number;
}

async function main(): Promise<void> {
  const started = Date.now();
  const a = AUDIO_BENCH_SHAPE.audio;
  const t = AUDIO_BENCH_SHAPE.text;
  log(
    `bench model = Voxtral layout: encoder ${a.hidden_size} x ${a.num_hidden_layers} layers, ${a.num_attention_heads} heads, ${a.num_mel_bins} mel bins ` +
      `(Whisper-small-sized; 1500 frames -> 375 tokens per 30 s); decoder ${t.hidden_size} x ${t.num_hidden_layers} (SmolLM2-135M-sized), vocab 131072; random BF16 weights`,
  );
  log(
    `machine: ${cpus().length} cores, load average ${loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')} at start`,
  );
  ensureAudioBenchModel(log);
  const clipDir = join(dirname(AUDIO_BENCH_MODEL_DIR), 'bench-audio-clips');
  makeClips(clipDir);
  const b = await openBenchBrowser({ root: here, repoRoot, publicDir: dirname(AUDIO_BENCH_MODEL_DIR) });
  let r: { tokens: number; clipBytes: number; cold: Phase; again: Phase; recording: { first: Phase; grown: Phase } };
  try {
    const model = relative(dirname(AUDIO_BENCH_MODEL_DIR), AUDIO_BENCH_MODEL_DIR);
    r = await runBenchPage(
      b.page,
      `${b.url}audio.html?${new URLSearchParams({ model, tokens: String(tokens) })}`,
      { result: '__audioBenchResult', error: '__audioBenchError' },
      timeoutMs,
    );
  } finally {
    await b.close();
  }
  const ms = (x: number) => x.toFixed(0);
  const row = (label: string, p: Phase) => [
    label,
    `${p.chunks} / ${p.chunksEncoded}`,
    String(p.promptTokens),
    ms(p.decodeMs),
    ms(p.featuresMs),
    p.chunksEncoded > 0 ? ms(p.encodeMsPerChunk) : '-',
    ms(p.ttftMs),
    p.decodeTokensPerSecond.toFixed(1),
  ];
  console.log(
    `\nAudio: Voxtral layout (Whisper-small-sized encoder, SmolLM2-135M-sized decoder), random weights; ${tokens} decode tokens; prefix caching off`,
  );
  console.log(
    table(
      ['request', 'chunks / encoded', 'prompt tokens', 'decode+resample ms', 'log-mel ms', 'encode ms/chunk', 'TTFT ms', 'decode tok/s'],
      [
        row(`30 s MP3 (${r.cold.sampleRate} Hz, ${r.cold.channels} ch), cold`, r.cold),
        row('the same file again', r.again),
        row('30 s recording (WAV 16 kHz)', r.recording.first),
        row('the recording grown to 60 s', r.recording.grown),
      ],
    ),
  );
  console.log(
    `\ncached clip: TTFT ${((r.again.ttftMs / r.cold.ttftMs) * 100).toFixed(1)}% of cold (goal <= 10%); grown recording: ${r.recording.grown.chunksEncoded} chunk encoded of ${r.recording.grown.chunks} (goal: 1)`,
  );
  console.log('peer (transformers.js on an ONNX export of the same weights): not run yet');
  console.log(
    JSON.stringify({
      bench: 'audio',
      adapter: 'headless Chromium, WebGPU',
      model: `Voxtral layout, encoder ${a.hidden_size}x${a.num_hidden_layers}, decoder ${t.hidden_size}x${t.num_hidden_layers}, random weights`,
      cores: cpus().length,
      ...r,
      cachedTtftShare: r.again.ttftMs / r.cold.ttftMs,
      peer: null,
      totalSeconds: (Date.now() - started) / 1000,
      loadAverageEnd: loadavg(),
    }),
  );
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? `${e.name}: ${e.message}` : e);
  process.exitCode = 1;
});
