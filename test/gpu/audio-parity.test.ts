// Parity of the audio side with the independent PyTorch reference (test/reference/voxtral.py): the tiny
// Voxtral checkpoints (scripts/make-tiny-audio.ts) on the deterministic clips of test/helpers/audio-clips.ts,
// through Tessera's log-mel extractor, audio encoder, projector and language model, on Dawn. One clip of
// 5 s (one chunk, 4 frames per token) and one of 35 s (two chunks encoded in one batch, 3 frames per token,
// odd widths and head_dim 20). Tolerances as in parity.test.ts: the reference is float64, tensors must agree
// within atol 1e-4 + rtol 1e-3 and greedy tokens exactly.

import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { NodeDirSource } from '../../src/io/model-source-node';
import type { AudioEncoder } from '../../src/model/audio-encoder';
import { generate } from '../../src/model/generate';
import { loadModel, type LoadedModel } from '../../src/model/load';
import { LogMelExtractor, logMelConfigFrom } from '../../src/processor/audio/log-mel';
import { testClip } from '../helpers/audio-clips';
import { GOLDEN_DIR, goldenF32 } from '../helpers/goldens';
import { expectClose } from '../helpers/parity';
import { ensureTinyModels } from '../helpers/tiny-models';
import { useGpu } from './gpu';

const gpu = useGpu();

interface AudioCase {
  seconds: number;
  chunks: number;
  audio_tokens: number;
  prompt_ids_head: number[];
  prompt_ids_tail: number[];
  prompt_length: number;
  greedy: number[];
  files: Record<string, { shape: number[] }>;
}

const manifest = JSON.parse(readFileSync(resolve(GOLDEN_DIR, 'audio/voxtral.json'), 'utf8')) as { cases: Record<string, AudioCase> };

let dir: string;
beforeAll(() => {
  dir = ensureTinyModels();
});

for (const [name, g] of Object.entries(manifest.cases)) {
  describe(`${name}: a ${g.seconds} s clip against the PyTorch reference`, () => {
    let model: LoadedModel;
    beforeAll(async () => {
      model = await loadModel(gpu(), new NodeDirSource(`${dir}/${name}`), { kvCacheTokens: 2048, maxTokensPerStep: 256, audioBatch: 2 });
      return () => model.destroy();
    });

    it('encoder output, projector output, first-step logits and 20 greedy tokens match', async () => {
      const pre = JSON.parse(readFileSync(`${dir}/${name}/preprocessor_config.json`, 'utf8'));
      const extractor = new LogMelExtractor(logMelConfigFrom(pre, 'preprocessor_config.json'));
      const pcm = testClip(g.seconds, 16000);
      const chunk = 480000;
      const numChunks = Math.ceil(pcm.length / chunk);
      expect(numChunks).toBe(g.chunks);
      const frames = extractor.numFrames;
      const mel = pre.feature_size as number;
      const features = new Float32Array(numChunks * mel * frames);
      for (let i = 0; i < numChunks; i++) features.set(extractor.extract(pcm.subarray(i * chunk, (i + 1) * chunk)), i * mel * frames);

      const audio = model.audio as AudioEncoder;
      expect(audio.maxBatch).toBe(2);
      const out = await audio.encode({ features, numChunks }, { captureTowerOutput: true });
      try {
        const S = model.config.audio!.encoder.maxSourcePositions;
        const D = model.config.audio!.encoder.hiddenSize;
        expectClose('encoder output, chunk 0', out.towerOutput!.subarray(0, S * D), goldenF32(`audio/${name}-tower-chunk0.f32.bin`));
        const embeds = await gpu().readF32(out.embeddings);
        expect(out.embeddings.shape).toEqual([g.audio_tokens, model.config.text.hiddenSize]);
        expectClose('projector output', embeds, goldenF32(`audio/${name}-embeds.f32.bin`));

        // The transcription prompt: <s> [INST] [BEGIN_AUDIO] [AUDIO] x n [/INST] lang:en [TRANSCRIBE].
        const ids = [...g.prompt_ids_head.slice(0, 3), ...new Array<number>(g.audio_tokens).fill(24), ...g.prompt_ids_tail.slice(1)];
        expect(ids.length).toBe(g.prompt_length);
        let logits: Float32Array | undefined;
        const tokens: number[] = [];
        for await (const t of generate(model.runner, 1, {
          promptIds: Uint32Array.from(ids),
          placeholders: [{ offset: 3, length: g.audio_tokens }],
          mediaEmbeddings: embeds,
          maxNewTokens: 20,
          stopIds: new Set([2]),
          chunkSize: 256, // chunk edges cut through the [AUDIO] run
          onFirstLogits: (l) => (logits = l),
        })) {
          tokens.push(t);
        }
        expectClose('first-step logits', logits!, goldenF32(`audio/${name}-logits-step0.f32.bin`));
        expect(tokens).toEqual(g.greedy);
        expect(model.kv.stats().numFree).toBe(model.kv.stats().numBlocks);
      } finally {
        gpu().release(out.embeddings);
      }
    });
  });
}
