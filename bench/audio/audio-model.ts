// The checkpoint `npm run bench:audio` runs: the Voxtral layout with a Whisper-small-sized encoder (d 768,
// 12 layers, 12 heads, 3072 MLP: 4 frames per token, 375 tokens per 30 s; 128 mel bins) and a
// SmolLM2-135M-sized decoder (576 x 30 layers, 9 heads / 3 kv heads, 1536 MLP; the Tekken vocabulary of
// 131072), RANDOM BF16 weights (the per-name PRNG init of scripts/tiny-weights.ts), with Voxtral's config
// schema, feature-extractor settings and tokenizer (test/fixtures/models/Voxtral-Mini-3B-2507).
// Output (git-ignored): .cache/bench-models/voxtral-small-random/, regenerated when its recipe changes.

import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeSafetensors } from '../../src/model/weights/safetensors-writer';
import { sha256, tensorsFor, writeJson } from '../../scripts/tiny-weights';

const root = join(import.meta.dirname, '../..');
const VOXTRAL = join(root, 'test/fixtures/models/Voxtral-Mini-3B-2507');
export const AUDIO_BENCH_MODEL_DIR = join(root, '.cache/bench-models/voxtral-small-random');

export const AUDIO_BENCH_SHAPE = {
  audio: {
    hidden_size: 768,
    intermediate_size: 3072,
    num_hidden_layers: 12,
    num_attention_heads: 12,
    num_key_value_heads: 12,
    head_dim: 64,
    num_mel_bins: 128,
  },
  text: {
    hidden_size: 576,
    intermediate_size: 1536,
    num_hidden_layers: 30,
    num_attention_heads: 9,
    num_key_value_heads: 3,
    head_dim: 64,
    max_position_embeddings: 8192,
  },
};
const RECIPE = `bench-audio v1: ${JSON.stringify(AUDIO_BENCH_SHAPE)}, make-tiny init, BF16, separate lm_head`;

export function ensureAudioBenchModel(log: (line: string) => void): void {
  const dir = AUDIO_BENCH_MODEL_DIR;
  const manifestPath = join(dir, 'manifest.json');
  if (existsSync(manifestPath)) {
    const m = JSON.parse(readFileSync(manifestPath, 'utf8')) as { recipe: string; files: Record<string, string> };
    if (m.recipe === RECIPE && Object.keys(m.files).every((f) => existsSync(join(dir, f)))) {
      log(`audio bench model: ${dir} is current, not regenerated`);
      return;
    }
  }
  rmSync(manifestPath, { force: true });
  mkdirSync(dir, { recursive: true });
  const t0 = performance.now();
  const files: Record<string, string> = {};
  for (const f of ['tokenizer.json', 'tokenizer_config.json', 'preprocessor_config.json']) {
    copyFileSync(join(VOXTRAL, f), join(dir, f));
    files[f] = sha256(readFileSync(join(dir, f)));
  }
  const config = JSON.parse(readFileSync(join(VOXTRAL, 'config.json'), 'utf8'));
  config.audio_config = { ...config.audio_config, ...AUDIO_BENCH_SHAPE.audio };
  config.text_config = { ...config.text_config, ...AUDIO_BENCH_SHAPE.text };
  config.hidden_size = AUDIO_BENCH_SHAPE.text.hidden_size;
  config._tessera =
    'Voxtral layout, Whisper-small-sized encoder, SmolLM2-135M-sized decoder, RANDOM weights: npm run bench:audio. Not a trained model.';
  writeJson(join(dir, 'config.json'), config);
  files['config.json'] = sha256(readFileSync(join(dir, 'config.json')));
  const bytes = writeSafetensors(tensorsFor(config, 'BF16'), { format: 'pt' });
  writeFileSync(join(dir, 'model.safetensors'), bytes);
  files['model.safetensors'] = sha256(bytes);
  writeJson(manifestPath, { recipe: RECIPE, files });
  log(
    `audio bench model: wrote ${dir} (${(bytes.length / 2 ** 20).toFixed(0)} MiB of BF16) in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
  );
}
