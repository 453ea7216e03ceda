// Parity of the audio side with the independent PyTorch reference (test/reference/voxtral.py): the tiny
// Voxtral checkpoints (scripts/make-tiny-audio.ts) on the deterministic clips of test/helpers/audio-clips.ts,
// through Tessera's audio intake (prepareAudio: the whole clip's log-mel cut into chunks, as HF's
// VoxtralProcessor and vLLM make it), audio encoder, projector and language model, on Dawn. A clip of 5 s
// (one chunk, 4 frames per token), one of 35 s (two chunks encoded in one batch, 3 frames per token, odd
// widths and head_dim 20) and one of 41 s whose chunk edge falls in loud audio and whose second chunk is
// quiet (the clip's floor clamps it, where its own would not). Tolerances as in parity.test.ts: the reference
// is float64, tensors must agree within atol 1e-4 + rtol 1e-3 and greedy tokens exactly.

import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { NodeDirSource } from '../../src/io/model-source-node';
import type { AudioEncoder } from '../../src/model/audio-encoder';
import { generate } from '../../src/model/generate';
import { loadModel } from '../../src/families/load';
import type { LoadedModel } from '../../src/model/load';
import { quietClip, testClip } from '../helpers/audio-clips';
import { extractorOf, intakeChunks } from '../helpers/audio-intake';
import { GOLDEN_DIR, goldenF32 } from '../helpers/goldens';
import { expectClose } from '../helpers/parity';
import { ensureTinyModels } from '../helpers/tiny-models';
import { useGpu } from './gpu';

const gpu = useGpu();

interface AudioCase {
  model: string;
  clip: string;
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
  describe(`${name}: a ${g.seconds} s clip (${g.clip}) on ${g.model} against the PyTorch reference`, () => {
    let model: LoadedModel;
    beforeAll(async () => {
      model = await loadModel(gpu(), new NodeDirSource(`${dir}/${g.model}`), { kvCacheTokens: 2048, maxTokensPerStep: 256, audioBatch: 2 });
      return () => model.destroy();
    });

    it('encoder output, projector output, first-step logits and 20 greedy tokens match', async () => {
      const pcm = g.clip === 'quiet after 30.5 s' ? quietClip(g.seconds, 16000) : testClip(g.seconds, 16000);
      // The whole clip's log-mel cut into chunks, as the encoder's audio intake makes it.
      const chunkFeatures = (await intakeChunks(extractorOf(`${dir}/${g.model}`), pcm)).map((c) => c.features);
      const numChunks = chunkFeatures.length;
      expect(numChunks).toBe(g.chunks);
      const features = new Float32Array(chunkFeatures.reduce((a, f) => a + f.length, 0));
      for (const [i, f] of chunkFeatures.entries()) features.set(f, i * f.length);

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
