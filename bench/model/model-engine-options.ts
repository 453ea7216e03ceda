// How `bench:model` creates our engine, in Node and in the browser alike. The media encoder runs
// in-process, on the engine's own device: one device holds everything Tessera allocates, so
// engine.stats().gpuMemory.peakBytes covers the vision tower too, and the page's GPU probe sees it
// (an encoder Web Worker would have a device of its own). No persistent cache tier (IndexedDB / files):
// a rerun must not start warm. The memory tier stays on; bench/model/model-ours.ts sends byte-distinct copies
// of the image so measured requests miss it, and measures one deliberate hit.

import type { EncoderOptions } from '../../src/engine/encoder-options';

export const BENCH_ENCODER_OPTIONS: EncoderOptions = { mode: 'in-process', persistentCacheBytes: 0 };

export function describeEncoderOptions(): string {
  return "createEngine({ encoder: { mode: 'in-process', persistentCacheBytes: 0 } }): vision encoder on the engine's device, memory cache tier only";
}
