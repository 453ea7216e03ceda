// Browser parity harness (used by test/e2e/parity.spec.ts): the same pipeline as test/gpu/parity.test.ts,
// in the browser's own WebGPU, returning the vision tower output, the connector output, the first-step
// logits and the greedy tokens for the test to compare with the PyTorch goldens.

import { createBrowserGpuContext } from '../../../src/gpu/browser';
import { UrlSource } from '../../../src/io/model-source';
import { generate } from '../../../src/model/generate';
import { loadModel } from '../../../src/model/load';
import type { DtypeOption } from '../../../src/model/weights/dtype';
import { CacheApiWeightStore } from '../../../src/model/weights/store';
import { decodeImageBrowser } from '../../../src/processor/image-decode';
import { Idefics3Processor } from '../../../src/processor/processor';

export interface ParityResult {
  tokenIds: number[];
  tilesU8: number[];
  towerOutput: number[];
  connector: number[];
  logits: number[];
  adapter: string;
  /** GPU bytes of the weights, and what happened to each file's stored quantized copy. */
  weightBytes: number;
  storedCopies: Record<string, string>;
}

export interface ParityOptions {
  dtype?: DtypeOption;
  /** Keep / read stored quantized copies in the Cache API. */
  weightCache?: boolean;
}

declare global {
  interface Window {
    tesseraParity?: (model: string, maxNewTokens: number, options?: ParityOptions) => Promise<ParityResult>;
  }
}

window.tesseraParity = async (model, maxNewTokens, options = {}) => {
  const gpu = await createBrowserGpuContext();
  try {
    const source = new UrlSource(model);
    const processor = await Idefics3Processor.load(source, { decodeImage: decodeImageBrowser });
    const loaded = await loadModel(gpu, source, {
      kvCacheTokens: 512,
      maxTokensPerStep: 128,
      dtype: options.dtype,
      weightStore: options.weightCache ? CacheApiWeightStore.available() : undefined,
    });
    try {
      const image = new Uint8Array(await (await fetch('/sample.png')).arrayBuffer());
      const prepared = await processor.prepare([
        {
          role: 'user',
          content: [
            { type: 'image', image },
            { type: 'text', text: 'Can you describe this image?' },
          ],
        },
      ]);
      const im = prepared.images[0];
      const vision = await loaded.vision!.encode({ pixels: im.pixelValues, numTiles: im.layout.numTiles }, { captureTowerOutput: true });
      const connector = await gpu.readF32(vision.embeddings);
      let logits: Float32Array | undefined;
      const tokenIds: number[] = [];
      for await (const t of generate(loaded.runner, 1, {
        promptIds: prepared.plan.tokenIds,
        placeholders: prepared.plan.placeholders.flatMap((p) => p.runs),
        mediaEmbeddings: connector,
        maxNewTokens,
        stopIds: new Set(processor.stopTokenIds),
        chunkSize: 100,
        onFirstLogits: (l) => (logits = l),
      })) {
        tokenIds.push(t);
      }
      gpu.release(vision.embeddings);
      return {
        tokenIds,
        tilesU8: Array.from(im.tilesU8),
        towerOutput: Array.from(vision.towerOutput!),
        connector: Array.from(connector),
        logits: Array.from(logits!),
        adapter: `${gpu.adapter.vendor} ${gpu.adapter.architecture}`,
        weightBytes: loaded.weights.sizeBytes,
        storedCopies: loaded.weights.storedCopies,
      };
    } finally {
      loaded.destroy();
    }
  } finally {
    gpu.destroy();
  }
};
document.body.dataset.ready = 'yes';
