// Browser side of the transformers.js peer of `npm run bench:audio` (driver: bench/audio/audio.ts; the peer
// itself: audio-peer.ts). Query: model=<folder served at /> tokens=N recording=0|1 (the token-comparison request). Reads the clips the driver decoded to
// 16 kHz mono f32 (/bench-audio-clips/*-16k.f32). Figures go to window.__audioPeerResult (or a message in
// window.__audioPeerError).

import { runAudioPeer, type AudioPeerFigures } from './audio-peer';

declare global {
  interface Window {
    __audioPeerResult?: AudioPeerFigures;
    __audioPeerError?: string;
  }
}

const params = new URLSearchParams(location.search);
const log = (line: string) => console.log(`[bench] ${line}`);

async function pcm(name: string): Promise<Float32Array> {
  const r = await fetch(`/bench-audio-clips/${name}`);
  if (!r.ok) throw new Error(`/bench-audio-clips/${name}: HTTP ${r.status} (the driver writes it with ffmpeg)`);
  return new Float32Array(await r.arrayBuffer());
}

async function main(): Promise<AudioPeerFigures> {
  const withRecording = params.get('recording') !== '0';
  const [clip, warm, recording] = await Promise.all([
    pcm('clip-30s-16k.f32'),
    pcm('warm-2s-16k.f32'),
    withRecording ? pcm('rec-30s-16k.f32') : undefined,
  ]);
  return runAudioPeer({
    modelId: params.get('model') ?? 'voxtral-small-random',
    clip,
    warm,
    recording,
    maxNewTokens: Number(params.get('tokens') ?? 32),
    log,
  });
}

main().then(
  (r) => (window.__audioPeerResult = r),
  (e: unknown) => {
    console.error(e);
    window.__audioPeerError = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
  },
);
