// The encoder's audio intake (src/encoder/audio/prepare-audio.ts) on PCM, outside an engine: each chunk's
// key and the features kept under it, in order.

import { readFileSync } from 'node:fs';
import { prepareAudio } from '../../src/encoder/audio/prepare-audio';
import { LogMelExtractor, logMelConfigFrom } from '../../src/processor/audio/log-mel';
import type { AudioFeatures } from '../../src/protocol/encoder';

export interface IntakeChunk {
  key: string;
  features: Float32Array;
}

/** The extractor of a checkpoint folder's preprocessor_config.json (a Whisper feature extractor). */
export function extractorOf(modelDir: string): LogMelExtractor {
  const pre = JSON.parse(readFileSync(`${modelDir}/preprocessor_config.json`, 'utf8'));
  return new LogMelExtractor(logMelConfigFrom(pre, 'preprocessor_config.json'));
}

/** The chunks prepareAudio makes of 16 kHz mono `pcm`, with the features it keeps for each. */
export async function intakeChunks(extractor: LogMelExtractor, pcm: Float32Array, features?: AudioFeatures): Promise<IntakeChunk[]> {
  const kept = new Map<string, Float32Array>();
  const out = await prepareAudio(
    {
      extractor,
      chunkIdentity: 'test per-chunk identity',
      clipChunkIdentity: 'test whole-clip identity',
      tokensPerChunk: 1,
      keep: (key, f) => kept.set(key, f),
      drop: (key) => kept.delete(key),
    },
    { pcm, sampleRate: extractor.config.samplingRate },
    { maxChunks: 1000, contextWindow: 1_000_000, features },
  );
  return out.chunks.map((c) => ({ key: c.media.key, features: kept.get(c.media.key)! }));
}
