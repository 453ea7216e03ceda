// Browser harness for test/e2e/encoder-cache.spec.ts: an engine with encoder workers and the IndexedDB
// cache, images drawn on the page, and hooks to inspect and break things (corrupt a stored entry, make
// the store refuse writes, kill a worker mid-encode).

import { createStore, get, set } from 'idb-keyval';
import type { KeyValueStore } from '../../../src/cache/store';
import type { EncoderWorkerPool } from '../../../src/encoder/worker-pool';
import { createEngine } from '../../../src/engine/create-browser';
import type { Engine } from '../../../src/engine/engine';
import type { EngineStats, TesseraInfo } from '../../../src/engine/types';
import { mixedWorkload, specRequest } from '../../helpers/mixed-workload';

const MODEL = '/models/smolvlm-tiny/';
const idb = createStore('tessera-encoder-cache', 'entries');

/** A store whose writes fail like a full disk (QuotaExceededError); reads find nothing. */
function quotaStore(): KeyValueStore {
  const quota = () => Promise.reject(new DOMException('The quota has been exceeded.', 'QuotaExceededError'));
  return { get: async () => undefined, set: quota, del: async () => {}, keys: async () => [], clear: async () => {} };
}

/** A distinct, deterministic image per index: the sample photo for 0, flat-colour drawings otherwise. */
async function image(index: number): Promise<Uint8Array> {
  if (index === 0) return new Uint8Array(await (await fetch('/sample.png')).arrayBuffer());
  const canvas = new OffscreenCanvas(200 + 40 * index, 150);
  const g = canvas.getContext('2d')!;
  g.fillStyle = `hsl(${index * 67}, 70%, 50%)`;
  g.fillRect(0, 0, canvas.width, canvas.height);
  g.fillStyle = '#fff';
  g.fillRect(20 * index, 30, 60, 60);
  return new Uint8Array(await (await canvas.convertToBlob({ type: 'image/png' })).arrayBuffer());
}

export interface AskResult {
  tokenIds?: number[];
  media?: TesseraInfo['media'];
  error?: { name: string; message: string };
}

const harness = {
  engine: undefined as Engine | undefined,
  async create(options: { poolSize?: number; store?: 'idb' | 'quota' } = {}): Promise<string> {
    harness.engine?.destroy();
    harness.engine = await createEngine({
      model: MODEL,
      // The encoder cache's behaviour on WebGPU (the CPU backend's has its own tests).
      device: 'webgpu',
      encoder: { poolSize: options.poolSize ?? 1, store: options.store === 'quota' ? quotaStore() : undefined },
    });
    return harness.engine.stats().encoder.mode;
  },
  async ask(imageIndex: number, maxTokens = 4): Promise<AskResult> {
    try {
      const r = await harness.engine!.chat.completions.create({
        messages: [
          {
            role: 'user',
            content: [
              { type: 'image', image: await image(imageIndex) },
              { type: 'text', text: 'Can you describe this image?' },
            ],
          },
        ],
        max_tokens: maxTokens,
      });
      return { tokenIds: r.tessera.tokenIds, media: r.tessera.media };
    } catch (e) {
      const err = e as Error;
      return { error: { name: err.name, message: err.message } };
    }
  },
  /**
   * The mixed workload (test/helpers/mixed-workload.ts): every request alone, then all of them at once.
   * Returns both token lists and the engine's stats after them.
   */
  async mixed(n: number): Promise<{ solo: number[][]; together: number[][]; stats: EngineStats; refCounts: number[] }> {
    const e = harness.engine!;
    const specs = mixedWorkload(n);
    const reqs = await Promise.all(specs.map(async (s) => specRequest(s, s.image === undefined ? undefined : await image(s.image))));
    const solo: number[][] = [];
    const keys = new Set<string>();
    for (const r of reqs) {
      const out = await e.chat.completions.create(r);
      solo.push(out.tessera.tokenIds);
      for (const m of out.tessera.media) keys.add(m.key);
    }
    const together = (await Promise.all(reqs.map((r) => e.chat.completions.create(r)))).map((r) => r.tessera.tokenIds);
    return { solo, together, stats: e.stats(), refCounts: [...keys].map((k) => e.media.refCount(k)) };
  },
  /**
   * Destroy the engine's GPU device while a request decodes; returns that request's error and the next
   * request's tokens (the engine recreates its device and model).
   */
  async loseDeviceMidDecode(): Promise<{ error?: { name: string; message: string }; next: AskResult; stats: EngineStats }> {
    const e = harness.engine!;
    const steps = e.stats().scheduler.numSteps;
    const doomed = harness.ask(0, 60);
    while (e.stats().scheduler.numSteps < steps + 4) await new Promise((r) => setTimeout(r, 5));
    e.gpu.device.destroy();
    const first = await doomed;
    const next = await harness.ask(0, 4);
    return { error: first.error, next, stats: e.stats() };
  },
  stats(): EngineStats {
    return harness.engine!.stats();
  },
  refCount(key: string): number {
    return harness.engine!.media.refCount(key);
  },
  /** Wait until an encode has started, then terminate encoder worker 0. */
  async killWorkerDuringEncode(): Promise<void> {
    const start = harness.engine!.stats().lifecycle.encoding;
    while (harness.engine!.stats().lifecycle.encoding === start) await new Promise((r) => setTimeout(r, 5));
    (harness.engine!.media.backend as EncoderWorkerPool).killWorker(0);
  },
  /** Flip bytes in a stored entry's embeddings (the checksum no longer matches). */
  async corrupt(key: string): Promise<boolean> {
    const entry = (await get(key, idb)) as { data: Float32Array } | undefined;
    if (!entry) return false;
    entry.data[0] += 1;
    entry.data[entry.data.length - 1] -= 1;
    await set(key, entry, idb);
    return true;
  },
  /** Rewrite a stored entry as if another model had written it under this key. */
  async makeForeign(key: string): Promise<boolean> {
    const entry = (await get(key, idb)) as { meta: { identity: string } } | undefined;
    if (!entry) return false;
    entry.meta.identity = 'another-model-identity';
    await set(key, entry, idb);
    return true;
  },
  async clearCache(): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      const r = indexedDB.deleteDatabase('tessera-encoder-cache');
      r.onsuccess = () => resolve();
      r.onerror = () => reject(r.error);
      r.onblocked = () => resolve();
    });
  },
};

declare global {
  interface Window {
    harness: typeof harness;
  }
}
window.harness = harness;
document.body.dataset.ready = 'yes';
