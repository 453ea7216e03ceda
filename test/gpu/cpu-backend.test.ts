// The CPU backend beside WebGPU (test/cpu/ has the rest): its vision encoder in an encoder worker thread
// (the built dist/encoder-worker.js loads onnxruntime-node itself), and cache identity: the same image
// encoded by WGSL and by onnxruntime (values that differ in the last bits) gets different keys, so neither
// backend's embeddings are served to the other, while both answer with the greedy goldens.

import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { createEngine } from '../../src/engine/create-node';
import { goldenManifest } from '../helpers/goldens';
import { BUILT_WORKER, testEngine } from '../helpers/engine';
import { ensureTinyModels } from '../helpers/tiny-models';
import { useGpu } from './gpu';

const gpu = useGpu();
const SAMPLE = new Uint8Array(readFileSync(resolve(import.meta.dirname, '../../public/sample.png')));
const TOKENS = goldenManifest().greedy['smolvlm-tiny'].tokens;
const ask = {
  messages: [
    {
      role: 'user' as const,
      content: [
        { type: 'image' as const, image: SAMPLE },
        { type: 'text' as const, text: 'Can you describe this image?' },
      ],
    },
  ],
  max_tokens: 20,
  stream: false as const,
};

let dir: string;
beforeAll(() => {
  dir = `${ensureTinyModels()}/smolvlm-tiny`;
});

describe('the CPU backend beside WebGPU', () => {
  it('encodes in an encoder worker thread; the same image has another cache key on WebGPU; both answer with the goldens', async () => {
    const cpu = await createEngine({ model: dir, device: 'cpu', encoder: { workerScript: BUILT_WORKER, poolSize: 1 } });
    let cpuKey: string;
    try {
      expect(cpu.stats().encoder.mode).toBe('workers');
      const r = await cpu.chat.completions.create(ask);
      expect(r.tessera.tokenIds).toEqual(TOKENS);
      expect(r.tessera.media.map((m) => m.source)).toEqual(['encoded']);
      cpuKey = r.tessera.media[0]!.key;
    } finally {
      cpu.destroy();
    }
    const web = await testEngine(gpu(), dir, { kvCacheTokens: 1024 });
    try {
      const r = await web.chat.completions.create(ask);
      expect(r.tessera.tokenIds).toEqual(TOKENS);
      expect(r.tessera.media[0]!.key).not.toBe(cpuKey);
    } finally {
      web.destroy();
    }
  });
});
