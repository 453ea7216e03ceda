// The tiny Voxtral-shaped audio checkpoints for `npm run make:tiny`, kept apart from make-tiny.ts's image
// checkpoints. Like them: deterministic random weights (RANDOM: their answers are noise), the real
// Voxtral-Mini-3B-2507 config schema and feature-extractor settings, and a Tekken tokenizer.json
// (test/fixtures/models/Voxtral-Mini-3B-2507, whose README says where each file comes from), at reduced
// sizes. What real Voxtral-family checkpoints vary, the two vary:
//
//   voxtral-tiny/      encoder width 64, 2 heads (head_dim 32), 2 layers, 128 mel bins, projector stacking
//                      4 frames (375 tokens per 30 s chunk); decoder width 64, 2 heads / 1 kv head (head_dim
//                      32); separate lm_head; BF16
//   voxtral-tiny-odd/  encoder width 60, 3 heads (head_dim 20), 1 layer, 80 mel bins (Whisper-base's),
//                      projector stacking 3 frames (500 tokens per chunk); decoder width 48, 3 heads / 1 kv
//                      head (head_dim 16); tied embeddings; F16
//
// Both keep the full 131072-token vocabulary (the tokenizer's ids must fit) and 1500 encoder frames per
// 30-second chunk (the feature extractor's fixed chunk).

import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeSafetensors, type TensorToWrite } from '../src/model/weights/safetensors-writer';
import { sha256, tensorsFor, writeJson } from './tiny-weights';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const REAL = join(root, 'test/fixtures/models/Voxtral-Mini-3B-2507');
const FILES = ['tokenizer.json', 'tokenizer_config.json'];

interface TinyAudioVariant {
  audio: Record<string, number>;
  text: Record<string, number>;
  tied: boolean;
  dtype: TensorToWrite['dtype'];
  note: string;
}

export const TINY_AUDIO: Record<string, TinyAudioVariant> = {
  'voxtral-tiny': {
    audio: {
      hidden_size: 64,
      intermediate_size: 256,
      num_hidden_layers: 2,
      num_attention_heads: 2,
      num_key_value_heads: 2,
      head_dim: 32,
      num_mel_bins: 128,
    },
    text: {
      hidden_size: 64,
      intermediate_size: 128,
      num_hidden_layers: 2,
      num_attention_heads: 2,
      num_key_value_heads: 1,
      head_dim: 32,
      max_position_embeddings: 8192,
    },
    tied: false,
    dtype: 'BF16',
    note: 'Voxtral layout at tiny width: encoder 64 wide, 2 heads, 2 layers, 128 mel bins, 4 frames per token (375 tokens per 30 s); decoder 64 wide, 2 heads / 1 kv head; separate lm_head; BF16.',
  },
  'voxtral-tiny-odd': {
    audio: {
      hidden_size: 60,
      intermediate_size: 180,
      num_hidden_layers: 1,
      num_attention_heads: 3,
      num_key_value_heads: 3,
      head_dim: 20,
      num_mel_bins: 80,
    },
    text: {
      hidden_size: 48,
      intermediate_size: 96,
      num_hidden_layers: 2,
      num_attention_heads: 3,
      num_key_value_heads: 1,
      head_dim: 16,
      max_position_embeddings: 8192,
    },
    tied: true,
    dtype: 'F16',
    note: 'Odd shapes: encoder 60 wide, 3 heads (head_dim 20), 1 layer, 80 mel bins, 3 frames per token (500 tokens per 30 s); decoder 48 wide, 3 heads / 1 kv head (head_dim 16); tied embeddings; F16.',
  },
};

export function tinyVoxtralConfig(base: Record<string, any>, variant: TinyAudioVariant): Record<string, any> {
  const c = structuredClone(base);
  c.audio_config = { ...c.audio_config, ...variant.audio };
  c.text_config = { ...c.text_config, ...variant.text };
  c.hidden_size = variant.text.hidden_size;
  c.tie_word_embeddings = variant.tied;
  if (variant.dtype === 'F16') c.torch_dtype = 'float16';
  c._tessera = 'Random weights at reduced sizes, made by `npm run make:tiny`. Not a trained model.';
  return c;
}

/** Writes every tiny audio checkpoint under outDir; returns each one's file sha256s (for manifest.json). */
export function makeTinyAudio(outDir: string): Record<string, Record<string, string>> {
  const base = JSON.parse(readFileSync(join(REAL, 'config.json'), 'utf8'));
  const manifest: Record<string, Record<string, string>> = {};
  for (const [name, variant] of Object.entries(TINY_AUDIO)) {
    const dir = join(outDir, name);
    mkdirSync(dir, { recursive: true });
    const config = tinyVoxtralConfig(base, variant);
    writeJson(join(dir, 'config.json'), config);
    for (const f of FILES) copyFileSync(join(REAL, f), join(dir, f));
    const pre = JSON.parse(readFileSync(join(REAL, 'preprocessor_config.json'), 'utf8'));
    pre.feature_size = variant.audio.num_mel_bins;
    writeJson(join(dir, 'preprocessor_config.json'), pre);
    const bytes = writeSafetensors(tensorsFor(config, variant.dtype), { format: 'pt' });
    writeFileSync(join(dir, 'model.safetensors'), bytes);
    writeFileSync(
      join(dir, 'README.md'),
      `# ${name}\n\nRandom weights at reduced sizes, made by \`npm run make:tiny\` from the Voxtral-Mini-3B-2507 config schema,\n` +
        'feature-extractor settings and Tekken tokenizer. **Not a trained model: its answers are noise.**\n\n' +
        `${variant.note}\n`,
    );
    manifest[name] = { 'model.safetensors': sha256(bytes) };
  }
  return manifest;
}
