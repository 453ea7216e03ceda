// The encoder cache key names the weights: the same cache directory and modelId with changed vision
// weights re-encodes (different embeddings, different tokens), and two checkpoints given the same modelId
// never share entries. The weights' identity is a digest of every vision and connector tensor's name,
// dtype, shape and bytes, computed as the encoder loads them.

import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fsStore } from '../../src/cache/fs-store';
import type { ChatCompletionRequest } from '../../src/engine/types';
import { testEngine } from '../helpers/engine';
import { ensureTinyModels } from '../helpers/tiny-models';
import { useGpu } from './gpu';

const gpu = useGpu();
const SAMPLE = readFileSync(resolve(import.meta.dirname, '../../public/sample.png'));
const CONNECTOR = 'model.connector.modality_projection.proj.weight';

const ask: ChatCompletionRequest & { stream?: false } = {
  messages: [
    {
      role: 'user',
      content: [
        { type: 'image', image: SAMPLE },
        { type: 'text', text: 'Can you describe this image?' },
      ],
    },
  ],
  max_tokens: 4,
};

/** Flip the sign of every BF16 value of one tensor, in place (the file's size and header stay the same). */
function negateTensor(file: string, name: string): void {
  const bytes = readFileSync(file);
  const headerSize = Number(bytes.readBigUInt64LE(0));
  const header = JSON.parse(bytes.toString('utf8', 8, 8 + headerSize));
  const [begin, end] = header[name].data_offsets as [number, number];
  for (let o = 8 + headerSize + begin; o < 8 + headerSize + end; o += 2) bytes[o + 1] ^= 0x80; // BF16 sign bit (LE)
  writeFileSync(file, bytes);
}

let root: string;
let original: string;
let changed: string;

beforeAll(() => {
  original = `${ensureTinyModels()}/smolvlm-tiny`;
  root = mkdtempSync(join(tmpdir(), 'tessera-identity-'));
  changed = join(root, 'changed');
  cpSync(original, changed, { recursive: true });
  negateTensor(join(changed, 'model.safetensors'), CONNECTOR);
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('encoder cache identity', () => {
  it('changed vision weights under the same cacheDir and modelId are re-encoded, with different tokens', async () => {
    const cacheDir = join(root, 'cache');
    const opts = { kvCacheTokens: 1024, maxTokensPerStep: 128, modelId: 'my-model' };
    const a = await testEngine(gpu(), original, { ...opts, store: fsStore(cacheDir) });
    const first = await a.chat.completions.create(ask);
    a.destroy();
    expect(first.tessera.media[0].source).toBe('encoded');

    const b = await testEngine(gpu(), changed, { ...opts, store: fsStore(cacheDir) });
    const second = await b.chat.completions.create(ask);
    b.destroy();
    // Same modelId, same cache directory, same image: only the weights differ.
    expect(second.tessera.media[0].source).toBe('encoded');
    expect(second.tessera.media[0].key).not.toBe(first.tessera.media[0].key);
    expect(second.tessera.tokenIds).not.toEqual(first.tessera.tokenIds);

    // What the changed checkpoint answers without any cache: the cache served nothing stale.
    const fresh = await testEngine(gpu(), changed, opts);
    const third = await fresh.chat.completions.create(ask);
    fresh.destroy();
    expect(third.tessera.tokenIds).toEqual(second.tessera.tokenIds);
  });

  it('the same weights in another folder under the same modelId share the key', async () => {
    const copy = join(root, 'copy');
    cpSync(original, copy, { recursive: true });
    const a = await testEngine(gpu(), original, { kvCacheTokens: 1024, maxTokensPerStep: 128, modelId: 'same' });
    const b = await testEngine(gpu(), copy, { kvCacheTokens: 1024, maxTokensPerStep: 128, modelId: 'same' });
    try {
      const [pa, pb] = await Promise.all([a.media.prepare(SAMPLE), b.media.prepare(SAMPLE)]);
      expect(pa.key).toBe(pb.key);
      expect(a.media.info.identity).toBe(b.media.info.identity);
    } finally {
      a.destroy();
      b.destroy();
    }
  });
});
