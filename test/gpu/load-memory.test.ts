// What a load holds in JS memory: a checkpoint file is streamed (never held whole), a tensor is copied out of
// the stream's chunks as they arrive, and widened to f32 a chunk of rows at a time (never whole beside its
// bytes). Measured, not assumed: the live ArrayBuffer bytes after a full garbage collection, sampled at every
// upload of 1 MiB or more during the load (the moments a tensor and its widened rows are both alive), must stay
// within 1.25 x the largest tensor plus a fixed 16 MiB (the f32 staging chunk is 8 MiB).

import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { loadModel } from '../../src/families/load';
import type { GpuContext } from '../../src/gpu/context';
import { NodeDirSource } from '../../src/io/model-source-node';
import { openSafetensors } from '../../src/model/weights/safetensors';
import { ensureTinyModels } from '../helpers/tiny-models';
import { useGpu } from './gpu';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const gpu = useGpu();

/** `gpu` with every queue.writeBuffer calling `sample` first. */
function sampledUploads(base: GpuContext, sample: () => void): GpuContext {
  const queue = new Proxy(base.device.queue, {
    get: (target, name) => {
      if (name === 'writeBuffer') {
        return (...args: Parameters<GPUQueue['writeBuffer']>) => {
          // Uploads of 1 MiB or more: when a large tensor or its widened rows are alive (a full GC at
          // each of the hundreds of small uploads would only cost time).
          const data = args[2] as ArrayBufferView | ArrayBuffer;
          const size =
            typeof args[4] === 'number'
              ? args[4] * ('BYTES_PER_ELEMENT' in data ? (data.BYTES_PER_ELEMENT as number) : 1)
              : data.byteLength;
          if (size >= 2 ** 20) sample();
          return target.writeBuffer(...args);
        };
      }
      const v = Reflect.get(target, name, target);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
  const device = new Proxy(base.device, {
    get: (target, name) => {
      if (name === 'queue') return queue;
      const v = Reflect.get(target, name, target);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
  const view = Object.create(base) as GpuContext;
  Object.defineProperty(view, 'device', { value: device });
  return view;
}

async function largestTensorBytes(dir: string): Promise<number> {
  const source = new NodeDirSource(dir);
  const opened = await source.openBytes('model.safetensors');
  const st = await openSafetensors(opened!.stream, 'model.safetensors', undefined, opened!.sizeBytes);
  await st.close();
  return Math.max(...[...st.header.tensors.values()].map((t) => t.end - t.begin));
}

describe('JS memory while loading', () => {
  it.each([
    ['qwen3_vl-tiny', 'q4'], // F16 tensors widened and quantized: the 151936 x 64 embedding and head (19 MB each)
    ['qwen3_vl-tiny', 'f32'], // F16 tensors widened to f32 on the host
  ] as const)('%s (%s): live ArrayBuffers stay within 1.25 x the largest tensor + 16 MiB', async (name, dtype) => {
    const dir = `${ensureTinyModels()}/${name}`;
    const largest = await largestTensorBytes(dir);
    gc();
    const base = process.memoryUsage().arrayBuffers;
    let peak = 0;
    let samples = 0;
    const view = sampledUploads(gpu(), () => {
      gc();
      samples++;
      peak = Math.max(peak, process.memoryUsage().arrayBuffers - base);
    });
    const m = await loadModel(view, new NodeDirSource(dir), { dtype, kvCacheTokens: 64, maxTokensPerStep: 16 });
    m.destroy();
    const bound = 1.25 * largest + 16 * 2 ** 20;
    expect(samples).toBeGreaterThan(4);
    expect(largest).toBeGreaterThan(16 * 2 ** 20);
    expect(peak, `peak ${(peak / 2 ** 20).toFixed(1)} MiB, largest tensor ${(largest / 2 ** 20).toFixed(1)} MiB`).toBeLessThan(bound);
  });
});
