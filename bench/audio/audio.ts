// `npm run bench:audio`: audio asked about in headless Chromium on the Voxtral layout with a Whisper-small-sized
// encoder and a SmolLM2-135M-sized decoder (random weights, bench/audio/audio-model.ts): decode + resample ms
// (WebCodecs, in the encoder worker), log-mel ms, encode ms per 30-second chunk, TTFT and decode tokens/s for a
// 30 s MP3; the same file again (its chunk from the cache); a 30 s recording; a 45 s recording and then the same
// recording grown to 60 s (only the chunk it ended in is encoded again). Prints a table and ends with ONE JSON line holding every figure.
//
// Then the peer: transformers.js on an ONNX export of the same weights (bench/audio/audio-peer.ts, its own page
// in the same Chromium; the export runs on demand, bench/audio/audio-export.ts) on the same 30 s clip, printed
// beside ours as ratios and put in the JSON line's `peer` field.
//
// Flags: --tokens=N (decode tokens, default 32)  --timeout-min=N (default 60)  --no-peer (ours only)
//        --prefix-caching (the engine default: a repeat also reuses its KV prefix; off by default here)

import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { quietClip, testClip, wavBytes } from '../../test/helpers/audio-clips';
import { openBenchBrowser, runBenchPage } from '../harness/browser';
import { table } from '../harness/table';
import { type AudioExportFigures, ensureAudioOnnxExport } from './audio-export';
import { AUDIO_BENCH_MODEL_DIR, AUDIO_BENCH_SHAPE, ensureAudioBenchModel } from './audio-model';
import type { AudioPeerFigures } from './audio-peer';
import { makePeerPcm } from './audio-peer-input';

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = join(here, '../..');
const log = (line: string) => console.log(`[bench] ${line}`);
const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
const tokens = Number(arg('tokens') ?? 32);
const timeoutMs = Number(arg('timeout-min') ?? 60) * 60_000;
const withPeer = !process.argv.includes('--no-peer');

/**
 * The clips (deterministic: test/helpers/audio-clips.ts's tone, chirp and noise): a 30 s MP3 at 44.1 kHz
 * stereo (decoded and resampled), a 2 s warm-up WAV, a 30 s 16 kHz recording, and another as 45 s and grown
 * to 60 s (its first 45 s the same samples).
 */
function makeClips(dir: string): void {
  mkdirSync(dir, { recursive: true });
  const wav = (file: string, seconds: number, rate: number) => {
    if (!existsSync(join(dir, file))) writeFileSync(join(dir, file), wavBytes(testClip(seconds, rate), rate, 's16'));
  };
  wav('warm-2s.wav', 2, 16000);
  if (!existsSync(join(dir, 'rec-30s.wav')))
    writeFileSync(join(dir, 'rec-30s.wav'), wavBytes(testClip(60, 16000).subarray(0, 480000), 16000, 's16'));
  // A recording of 45 s grown to 60 s, its last 20 s quieter: chunk 0's window (its samples and the 40 after
  // them) and the clip's floor stay, so only chunk 1 is encoded again (whole-clip features).
  const recording = quietClip(60, 16000, 40, 0.5, 0.3);
  if (!existsSync(join(dir, 'rec-quiet-45s.wav')))
    writeFileSync(join(dir, 'rec-quiet-45s.wav'), wavBytes(recording.subarray(0, 45 * 16000), 16000, 's16'));
  if (!existsSync(join(dir, 'rec-quiet-60s.wav'))) writeFileSync(join(dir, 'rec-quiet-60s.wav'), wavBytes(recording, 16000, 's16'));
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

interface PeerResult extends AudioPeerFigures {
  export: {
    files: AudioExportFigures['files'];
    opset: number;
    torch: string;
    check: Record<string, unknown>;
    ortCheck: AudioExportFigures['ortCheck'];
  };
  /** transformers.js time / ours (encode per chunk, TTFT) and ours / transformers.js (decode tok/s): > 1 = ours faster. */
  speedup: { encodePerChunk: number; ttft: number; decode: number };
  /**
   * Greedy tokens of the 30 s recording (the same 16 kHz PCM in both engines): whether they equal ours, and how
   * many of the first agree; the same for the MP3 (whose PCM differs a little: WebCodecs + our resampler vs ffmpeg).
   */
  tokensEqualOurs: boolean;
  tokensAgreeingPrefix: number;
  mp3TokensEqualOurs: boolean;
  mp3TokensAgreeingPrefix: number;
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
  tokenIds: number[];
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
  let peerExport: AudioExportFigures | undefined;
  let peerSkipped: string | undefined = withPeer ? undefined : 'not run (--no-peer)';
  if (withPeer) {
    try {
      peerExport = await ensureAudioOnnxExport(AUDIO_BENCH_MODEL_DIR, repoRoot, log);
      makePeerPcm(clipDir);
    } catch (e) {
      peerSkipped = `the ONNX export failed: ${e instanceof Error ? `${e.name}: ${e.message}` : String(e)}`;
      log(`peer: ${peerSkipped}`);
    }
  }
  const b = await openBenchBrowser({ root: here, repoRoot, publicDir: dirname(AUDIO_BENCH_MODEL_DIR) });
  let r: { tokens: number; clipBytes: number; cold: Phase; again: Phase; recording: { first: Phase; grown: Phase } };
  let peer: PeerResult | undefined;
  try {
    const model = relative(dirname(AUDIO_BENCH_MODEL_DIR), AUDIO_BENCH_MODEL_DIR);
    const query = new URLSearchParams({ model, tokens: String(tokens), prefix: process.argv.includes('--prefix-caching') ? '1' : '0' });
    r = await runBenchPage(b.page, `${b.url}audio.html?${query}`, { result: '__audioBenchResult', error: '__audioBenchError' }, timeoutMs);
    if (peerExport) {
      try {
        const p = await runBenchPage<AudioPeerFigures>(
          b.page,
          `${b.url}audio-peer.html?${query}`,
          { result: '__audioPeerResult', error: '__audioPeerError' },
          timeoutMs,
        );
        const agree = (a: number[], b: number[]) => {
          let n = 0;
          while (n < a.length && a[n] === b[n]) n++;
          return n;
        };
        const same = (a: number[], b: number[]) => JSON.stringify(a) === JSON.stringify(b);
        peer = {
          ...p,
          export: {
            files: peerExport.files,
            opset: peerExport.opset,
            torch: peerExport.torch,
            check: peerExport.check,
            ortCheck: peerExport.ortCheck,
          },
          speedup: {
            encodePerChunk: p.encodeMsPerChunk / r.cold.encodeMsPerChunk,
            ttft: p.ttftMs / r.cold.ttftMs,
            decode: r.cold.decodeTokensPerSecond / p.decodeTokensPerSecond,
          },
          tokensEqualOurs: same(p.recordingTokenIds, r.recording.first.tokenIds),
          tokensAgreeingPrefix: agree(p.recordingTokenIds, r.recording.first.tokenIds),
          mp3TokensEqualOurs: same(p.tokenIds, r.cold.tokenIds),
          mp3TokensAgreeingPrefix: agree(p.tokenIds, r.cold.tokenIds),
        };
      } catch (e) {
        peerSkipped = `transformers.js failed: ${e instanceof Error ? `${e.name}: ${e.message}` : String(e)}`;
        log(`peer: ${peerSkipped}`);
      }
    }
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
    `\nAudio: Voxtral layout (Whisper-small-sized encoder, SmolLM2-135M-sized decoder), random weights; ${tokens} decode tokens; prefix caching ${process.argv.includes('--prefix-caching') ? 'on' : 'off'}`,
  );
  console.log(
    table(
      ['request', 'chunks / encoded', 'prompt tokens', 'decode+resample ms', 'log-mel ms', 'encode ms/chunk', 'TTFT ms', 'decode tok/s'],
      [
        row(`30 s MP3 (${r.cold.sampleRate} Hz, ${r.cold.channels} ch), cold`, r.cold),
        row('the same file again', r.again),
        row('30 s recording (WAV 16 kHz)', r.recording.first),
        row('a 45 s recording grown to 60 s', r.recording.grown),
      ],
    ),
  );
  console.log(
    `\ncached clip: TTFT ${((r.again.ttftMs / r.cold.ttftMs) * 100).toFixed(1)}% of cold (goal <= 10%); grown recording: ${r.recording.grown.chunksEncoded} chunk encoded of ${r.recording.grown.chunks} (goal: 1)`,
  );
  if (peer) {
    const x = (v: number) => `${v.toFixed(2)}x`;
    console.log(
      `\nPeer: ${peer.library} (${peer.onnxruntime}, WebGPU EP, fp32) on an ONNX export of the same weights, same 30 s clip as 16 kHz PCM; ${tokens} decode tokens`,
    );
    console.log(
      table(
        ['figure', 'ours', 'transformers.js', 'ours vs transformers.js'],
        [
          ['log-mel (+ its tokenizer) ms', ms(r.cold.featuresMs), ms(peer.featuresMs), '-'],
          [
            'encode ms/chunk',
            ms(r.cold.encodeMsPerChunk),
            ms(peer.encodeMsPerChunk),
            `${x(peer.speedup.encodePerChunk)} faster (goal >= 5x)`,
          ],
          ['TTFT ms (ours: from the MP3; its: from PCM)', ms(r.cold.ttftMs), ms(peer.ttftMs), `${x(peer.speedup.ttft)} faster`],
          [
            'decode tok/s',
            r.cold.decodeTokensPerSecond.toFixed(1),
            peer.decodeTokensPerSecond.toFixed(1),
            `${x(peer.speedup.decode)} faster`,
          ],
          [
            'prompt tokens',
            String(r.cold.promptTokens),
            String(peer.promptTokens),
            r.cold.promptTokens === peer.promptTokens ? 'equal' : 'DIFFER',
          ],
        ],
      ),
    );
    console.log(
      `greedy tokens on the 30 s recording (same PCM): ${peer.tokensEqualOurs ? 'EQUAL' : `first ${peer.tokensAgreeingPrefix} of ${peer.recordingTokenIds.length} agree`} ` +
        `(ours ${JSON.stringify(r.recording.first.tokenIds.slice(0, 8))}..., transformers.js ${JSON.stringify(peer.recordingTokenIds.slice(0, 8))}...); ` +
        `on the MP3: ${peer.mp3TokensEqualOurs ? 'EQUAL' : `first ${peer.mp3TokensAgreeingPrefix} agree`}\n` +
        `export check: tokens vs float64 reference ${peer.export.check.tokensEqual ? 'equal' : 'DIFFER'} (torch), ` +
        `${peer.export.ortCheck.tokensEqual ? 'equal' : 'DIFFER'} (onnxruntime wasm), audio features max|diff| ${peer.export.ortCheck.audioFeaturesMaxAbsDiff.toExponential(2)}`,
    );
  } else {
    console.log(`peer (transformers.js on an ONNX export of the same weights): ${peerSkipped}`);
  }
  console.log(
    JSON.stringify({
      bench: 'audio',
      adapter: 'headless Chromium, WebGPU',
      model: `Voxtral layout, encoder ${a.hidden_size}x${a.num_hidden_layers}, decoder ${t.hidden_size}x${t.num_hidden_layers}, random weights`,
      cores: cpus().length,
      ...r,
      cachedTtftShare: r.again.ttftMs / r.cold.ttftMs,
      peer: peer ?? { skipped: peerSkipped },
      totalSeconds: (Date.now() - started) / 1000,
      loadAverageEnd: loadavg(),
    }),
  );
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? `${e.name}: ${e.message}` : e);
  process.exitCode = 1;
});
