// bench/load/load-child.mjs <dist dir> <model dir> <dtype>: one load, in a process of its own (run by
// bench/load/load.ts with --expose-gc): createEngine from that tree's dist/node.js, timed, with the live
// ArrayBuffer bytes (after a full GC) and the resident memory sampled every 20 ms. Prints one JSON line.
// Plain JavaScript: it runs against any tree's build, the tree before a change included.
import { pathToFileURL } from 'node:url';

const [dist, model, dtype] = process.argv.slice(2);
const { createEngine } = await import(pathToFileURL(`${dist}/node.js`).href);
const gc = globalThis.gc;
if (!gc) throw new Error('run with node --expose-gc');
gc();
const base = process.memoryUsage();
let peakBuffers = 0;
let peakRss = base.rss;
const sample = () => {
  gc();
  const m = process.memoryUsage();
  peakBuffers = Math.max(peakBuffers, m.arrayBuffers - base.arrayBuffers);
  peakRss = Math.max(peakRss, m.rss);
};
const timer = setInterval(sample, 20);
const t0 = performance.now();
const engine = await createEngine({
  model,
  device: 'webgpu',
  dtype,
  kvCacheTokens: 1024,
  weightCacheDir: false,
  encoder: { mode: 'in-process' },
});
const loadMs = performance.now() - t0;
clearInterval(timer);
sample();
const gpu = engine.stats().gpuMemory;
console.log(
  JSON.stringify({
    dtype,
    loadMs,
    peakArrayBuffers: peakBuffers,
    baseRss: base.rss,
    peakRss,
    gpuPeakBytes: gpu.peakBytes,
    weightBytes: engine.stats().weightBytes,
  }),
);
engine.destroy();
