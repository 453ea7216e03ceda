// The CPU backend beside WebGPU (test/cpu/ has the rest): its vision encoder in an encoder worker thread
// (the built dist/encoder-worker.js loads onnxruntime-node itself), and cache identity: the WGSL tower and
// the ONNX graph (whose embeddings differ in the last bits) have different encoder identities, so the same
// image gets different cache keys and neither backend's embeddings are served to the other.

import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { startInProcessBackend } from '../../src/encoder/in-process';
import { workerInit } from '../../src/engine/encoder-options';
import { createEngine } from '../../src/engine/create-node';
import { NodeDirSource } from '../../src/io/model-source-node';
import { decodeImageNode } from '../../src/processor/node';
import { goldenManifest, qwenPipelineGoldens } from '../helpers/goldens';
import { BUILT_WORKER } from '../helpers/engine';
import { ensureTinyModels } from '../helpers/tiny-models';
import { useGpu } from './gpu';

const gpu = useGpu();
const SAMPLE = new Uint8Array(readFileSync(resolve(import.meta.dirname, '../../public/sample.png')));
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
  it("encodes in an encoder worker thread with the goldens; its encoder identity (and so every cache key) differs from the WGSL tower's", async () => {
    const cpu = await createEngine({ model: dir, device: 'cpu', encoder: { workerScript: BUILT_WORKER, poolSize: 1 } });
    let cpuIdentity: string;
    let cpuKey: string;
    try {
      expect(cpu.stats().encoder.mode).toBe('workers');
      expect(cpu.media.info.backend).toBe('cpu');
      const r = await cpu.chat.completions.create(ask);
      expect(r.tessera.tokenIds).toEqual(goldenManifest().greedy['smolvlm-tiny'].tokens);
      expect(r.tessera.media.map((m) => m.source)).toEqual(['encoded']);
      cpuIdentity = cpu.media.info.identity;
      cpuKey = r.tessera.media[0]!.key;
    } finally {
      cpu.destroy();
    }
    const source = new NodeDirSource(dir);
    const web = await startInProcessBackend(
      { createGpu: async () => gpu(), releaseGpu: () => {}, openModel: () => source, decodeImage: decodeImageNode },
      // The same modelId as the engine's (its source's location): only the backend differs.
      workerInit({ kind: 'dir', path: source.where }, source.where, {}),
    );
    try {
      expect(web.info.backend).toBe('webgpu');
      expect(web.info.identity).not.toBe(cpuIdentity);
      expect((await web.prepare(SAMPLE)).key).not.toBe(cpuKey);
    } finally {
      web.destroy();
    }
  });

  it('Qwen3-VL encodes in an encoder worker thread too: its rows and DeepStack levels cross the wire, with the reference tokens', async () => {
    const { input, golden } = qwenPipelineGoldens();
    const want = golden.models.find((m) => m.checkpoint === 'qwen3_vl-tiny')!.cases.find((c) => c.id === 'sample')!;
    const content = input.cases
      .find((c) => c.id === 'sample')!
      .content.map((p) =>
        p.image
          ? { type: 'image' as const, image: new Uint8Array(readFileSync(resolve(p.image))) }
          : { type: 'text' as const, text: p.text! },
      );
    const cpu = await createEngine({
      model: `${ensureTinyModels()}/qwen3_vl-tiny`,
      device: 'cpu',
      encoder: { workerScript: BUILT_WORKER, poolSize: 1 },
    });
    try {
      expect(cpu.stats().encoder.mode).toBe('workers');
      expect(cpu.media.info.deepstackLevels).toBe(2);
      const r = await cpu.chat.completions.create({ messages: [{ role: 'user', content }], max_tokens: want.tokens.length });
      expect(r.tessera.tokenIds).toEqual(want.tokens);
    } finally {
      cpu.destroy();
    }
  });
});
