// One load in headless Chromium for `npm run bench:load`: a fresh browser per load (so every process's peak
// is this load's), the page bench/load/load-page.ts, and Chromium's process memory from outside. The
// DevTools protocol (SystemInfo.getProcessInfo) names each process of the browser (browser, renderer, GPU,
// utility) and its pid; the resident memory of each is read from /proc/<pid>/status every 100 ms (VmRSS),
// and its high-water mark (VmHWM) once the load is done, which catches a peak between two samples.
//
// What the figures mean on SwiftShader: GPU buffers are host memory in the GPU process, so its peak is
// about the GPU memory; what the load holds in JavaScript and wasm is the renderer's growth over its
// resident memory before the load (the page with the engine's modules loaded), of which the page's V8
// heap and ArrayBuffers (Runtime.getHeapUsage) are reported apart.

import { readFileSync } from 'node:fs';
import { chromium } from 'playwright-core';
import { chromiumLaunchOptions } from '../../scripts/chromium';
import type { BenchServer } from '../harness/server';
import type { PageLoadFigures } from './load-page';

export interface ChromiumLoadFigures extends PageLoadFigures {
  /** Per process type: resident bytes before the load and the peak during it (processes of a type summed). */
  processes: Record<string, { baseRss: number; peakRss: number }>;
  /**
   * The page's own heap through the protocol (Runtime.getHeapUsage, sampled with the processes): the peak of
   * the V8 heap in use and of ArrayBuffer backing stores, each over its value before the load. The rest of
   * the renderer's growth is memory V8 does not own (WebGPU's shared memory to the GPU process, wasm, fetch).
   */
  page: { peakHeapBytes: number; peakBackingStoreBytes: number };
}

interface HeapUsage {
  usedSize: number;
  backingStorageSize?: number;
}

interface ProcessInfo {
  type: string;
  id: number;
}

/** A /proc/<pid>/status field in bytes, or 0 for a process that has exited. */
function procStatus(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  try {
    const m = readFileSync(`/proc/${pid}/status`, 'utf8').match(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

function byType(processes: readonly ProcessInfo[], field: 'VmRSS' | 'VmHWM'): Map<string, number> {
  const out = new Map<string, number>();
  for (const p of processes) out.set(p.type, (out.get(p.type) ?? 0) + procStatus(p.id, field));
  return out;
}

/**
 * `collectGarbage`: before each heap sample, a full GC of the page (HeapProfiler.collectGarbage), so its
 * figures are what the load keeps alive rather than what V8 has not collected yet (slower; the renderer's
 * resident peak then counts less garbage too).
 */
export async function loadInChromium(
  server: BenchServer,
  request: { model: string; mmproj?: string; dtype: string },
  log: (line: string) => void,
  collectGarbage = false,
): Promise<ChromiumLoadFigures> {
  const browser = await chromium.launch(chromiumLaunchOptions());
  try {
    const page = await browser.newPage();
    page.on('console', (m) => {
      if (m.type() === 'error' || m.type() === 'warning') log(`[page ${m.type()}] ${m.text()}`);
    });
    page.on('crash', () => log('[page crash] the renderer crashed (out of memory?)'));
    await page.goto(`${server.url}load.html`);
    await page.waitForFunction(() => 'runLoad' in window, undefined, { timeout: 120_000 });
    const cdp = await browser.newBrowserCDPSession();
    const processInfo = async () => ((await cdp.send('SystemInfo.getProcessInfo')) as { processInfo: ProcessInfo[] }).processInfo;
    const seen = new Map<number, ProcessInfo>();
    for (const p of await processInfo()) seen.set(p.id, p);
    const base = byType([...seen.values()], 'VmRSS');
    const peak = new Map(base);
    const pageCdp = await page.context().newCDPSession(page);
    const heap = async () => (await pageCdp.send('Runtime.getHeapUsage')) as HeapUsage;
    const heapBase = await heap();
    const heapPeak = { used: 0, backing: 0 };
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        for (const p of await processInfo().catch(() => [])) seen.set(p.id, p);
        for (const [type, rss] of byType([...seen.values()], 'VmRSS')) peak.set(type, Math.max(peak.get(type) ?? 0, rss));
        if (collectGarbage) await pageCdp.send('HeapProfiler.collectGarbage').catch(() => undefined);
        const h = await heap().catch(() => undefined);
        if (h) {
          heapPeak.used = Math.max(heapPeak.used, h.usedSize - heapBase.usedSize);
          heapPeak.backing = Math.max(heapPeak.backing, (h.backingStorageSize ?? 0) - (heapBase.backingStorageSize ?? 0));
        }
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    let figures: PageLoadFigures;
    try {
      figures = await page.evaluate(
        (r) => (window as unknown as { runLoad: (r: unknown) => Promise<PageLoadFigures> }).runLoad(r),
        request,
      );
    } finally {
      sampling = false;
      await sampler;
    }
    // The high-water marks cover the page's start too; a type's peak is never below its sampled one.
    for (const [type, hwm] of byType([...seen.values()], 'VmHWM')) peak.set(type, Math.max(peak.get(type) ?? 0, hwm));
    const processes: ChromiumLoadFigures['processes'] = {};
    for (const [type, p] of peak) processes[type] = { baseRss: base.get(type) ?? 0, peakRss: p };
    return { ...figures, processes, page: { peakHeapBytes: heapPeak.used, peakBackingStoreBytes: heapPeak.backing } };
  } finally {
    await browser.close();
  }
}
