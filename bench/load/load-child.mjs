// bench/load/load-child.mjs <dist dir> <model> <dtype> <time|memory>: one load, in a process of its own (run
// by bench/load/load.ts): createEngine from that tree's dist/node.js. Prints one JSON line.
//
//   time     the load's wall time and its phases (weights: until the first 'compile' progress event; compile:
//            the rest, the pipelines and the media encoder), with the resident memory sampled every 20 ms
//            (process.memoryUsage.rss(), which costs microseconds)
//   memory   the same load with a full GC every 100 ms (run with --expose-gc) and the live ArrayBuffer bytes
//            after each: what the load holds in JS (a tensor is held for the seconds its upload takes, so
//            a peak is not missed). The GCs slow the load, so this run's time is not reported.
//
// Plain JavaScript: it runs against any tree's build, the tree before a change included.
import { pathToFileURL } from 'node:url';

const [dist, model, dtype, mode = 'time'] = process.argv.slice(2);
const { createEngine } = await import(pathToFileURL(`${dist}/node.js`).href);
const gc = mode === 'memory' ? globalThis.gc : undefined;
if (mode === 'memory' && !gc) throw new Error('the memory run needs node --expose-gc');
gc?.();
const base = process.memoryUsage();
let peakBuffers = 0;
let peakRss = base.rss;
const sample = () => {
  if (gc) {
    gc();
    peakBuffers = Math.max(peakBuffers, process.memoryUsage().arrayBuffers - base.arrayBuffers);
  }
  peakRss = Math.max(peakRss, process.memoryUsage.rss());
};
// RSS every 20 ms (microseconds each); the GC and the live ArrayBuffers every 100 ms in the memory run.
let ticks = 0;
const timer = setInterval(() => {
  if (gc && ++ticks % 5 === 0) sample();
  else peakRss = Math.max(peakRss, process.memoryUsage.rss());
}, 20);
const t0 = performance.now();
let weightsMs;
const engine = await createEngine({
  model,
  device: 'webgpu',
  dtype,
  kvCacheTokens: 1024,
  weightCacheDir: false,
  encoder: { mode: 'in-process' },
  onProgress: (p) => {
    if (p.phase === 'compile' && weightsMs === undefined) weightsMs = performance.now() - t0;
  },
});
const loadMs = performance.now() - t0;
clearInterval(timer);
sample();
const stats = engine.stats();
console.log(
  JSON.stringify({
    mode,
    dtype,
    loadMs,
    weightsMs: weightsMs ?? loadMs,
    peakArrayBuffers: gc ? peakBuffers : undefined,
    baseRss: base.rss,
    peakRss,
    gpuPeakBytes: stats.gpuMemory.peakBytes,
    weightBytes: stats.weightBytes,
  }),
);
engine.destroy();
