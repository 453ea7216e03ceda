// The Load step's progress list, fed by createEngine's onProgress:
//
//   ✓ config + tokenizer     read
//   ✓ model.safetensors      [██████████] 40.1 MB · downloaded at 80 MB/s · to the GPU at 120 MB/s
//     compiling kernels      [████░░░░░░] step 2 of 5: decode
//     media encoder          [ (busy)   ] starting a Web Worker with its own GPU device
//
// One row per weight file (download, then upload to the GPU; a file already in browser storage or
// picked from disk has no download phase), then the warm-up compile (EngineProgress 'compile'), then
// the encoder start, which ends at 'ready'. Rows carry data-row / data-file / data-phase / data-state
// for the tests.

import type { EngineProgress } from '../src/engine/types';
import { formatBytes, formatMs, formatSpeed } from './format';

type RowState = 'active' | 'done' | 'failed';

interface Row {
  el: HTMLLIElement;
  bar: HTMLProgressElement;
  detail: HTMLElement;
}

/** One phase of one file; download and upload can interleave (a download streamed straight to the GPU). */
interface PhaseProgress {
  /** When the phase started (the event before its first one) and when its latest event came. */
  t0: number;
  tLast: number;
  loaded: number;
  total?: number;
}

interface FileProgress {
  row: Row;
  download?: PhaseProgress;
  upload?: PhaseProgress;
}

export class LoadProgressView {
  private files = new Map<string, FileProgress>();
  private meta?: Row;
  private compile?: { row: Row; t0: number };
  private encoder?: { row: Row; t0: number };
  private t0 = 0;
  /** The previous progress event (or the start): a phase's first bytes arrived some time after it. */
  private lastEvent = 0;

  constructor(
    private readonly list: HTMLOListElement,
    private readonly now: () => number = () => performance.now(),
  ) {}

  start(): void {
    this.list.replaceChildren();
    this.files.clear();
    this.compile = undefined;
    this.encoder = undefined;
    this.t0 = this.lastEvent = this.now();
    this.meta = this.row('meta', 'config + tokenizer');
    this.meta.detail.textContent = 'reading config.json, the tokenizer and the chat template';
  }

  update(p: EngineProgress): void {
    if (p.phase === 'download' || p.phase === 'upload') this.onFile(p);
    else if (p.phase === 'compile') this.onCompile(p);
    else if (p.phase === 'ready') this.finish();
  }

  /** Every row done; returns the whole load's time. */
  finish(): number {
    for (const f of this.files.values()) if (f.row.el.dataset.state === 'active') this.fileDone(f);
    for (const li of this.list.querySelectorAll<HTMLLIElement>('li[data-state="active"]')) this.settle(li, 'done');
    if (this.encoder) this.encoder.row.detail.textContent = `started in ${formatMs(this.now() - this.encoder.t0)}`;
    return this.now() - this.t0;
  }

  /** The active rows failed (the error itself is shown next to the list). */
  fail(): void {
    for (const li of this.list.querySelectorAll<HTMLLIElement>('li[data-state="active"]')) this.settle(li, 'failed');
  }

  private onFile(p: EngineProgress): void {
    if (this.meta?.el.dataset.state === 'active') {
      this.settle(this.meta.el, 'done');
      this.meta.detail.textContent = 'read';
    }
    const file = p.file ?? '?';
    const t = this.now();
    let f = this.files.get(file);
    if (!f) {
      const row = this.row('file', file);
      row.el.dataset.file = file;
      f = { row };
      this.files.set(file, f);
    }
    const phase = p.phase as 'download' | 'upload';
    const ph = (f[phase] ??= { t0: this.lastEvent, tLast: t, loaded: 0 });
    this.lastEvent = t;
    ph.tLast = t;
    ph.loaded = p.loadedBytes ?? 0;
    ph.total = p.totalBytes;
    f.row.el.dataset.phase = phase;
    setBar(f.row.bar, ph.loaded, ph.total);
    const amount = ph.total ? `${formatBytes(ph.loaded)} of ${formatBytes(ph.total)}` : formatBytes(ph.loaded);
    if (phase === 'upload' && ph.total !== undefined && ph.loaded >= ph.total) this.fileDone(f);
    else
      f.row.detail.textContent = `${phase === 'download' ? 'downloading' : 'uploading to the GPU'} · ${amount} · ${formatSpeed(rate(ph))}`;
  }

  private fileDone(f: FileProgress): void {
    this.settle(f.row.el, 'done');
    const from = f.download ? `downloaded at ${formatSpeed(rate(f.download))}` : 'from browser storage or disk';
    const up = f.upload ? ` · to the GPU at ${formatSpeed(rate(f.upload))}` : '';
    f.row.detail.textContent = `${formatBytes(f.upload?.loaded ?? f.download?.loaded ?? 0)} · ${from}${up}`;
  }

  private onCompile(p: EngineProgress): void {
    const t = this.now();
    if (!this.compile) this.compile = { row: this.row('compile', 'compiling kernels'), t0: t };
    const { row } = this.compile;
    const total = p.total ?? 0;
    const done = p.done ?? 0;
    setBar(row.bar, done, total || undefined);
    if (p.step === 'done' || (total > 0 && done >= total)) {
      this.settle(row.el, 'done');
      row.detail.textContent = `the language model's GPU pipelines, ${total} warm-up steps in ${formatMs(t - this.compile.t0)}`;
      this.encoder = { row: this.row('encoder', 'media encoder'), t0: t };
      this.encoder.row.detail.textContent = 'starting (a Web Worker with its own GPU device; its kernels compile with the first image)';
    } else {
      row.detail.textContent = `the language model's GPU pipelines · step ${done + 1} of ${total}: ${p.step ?? ''}`;
    }
  }

  private row(kind: string, what: string): Row {
    const el = document.createElement('li');
    el.dataset.row = kind;
    el.dataset.state = 'active';
    const name = document.createElement('span');
    name.className = 'what';
    name.textContent = what;
    name.title = what;
    const bar = document.createElement('progress');
    bar.setAttribute('aria-label', what);
    const detail = document.createElement('span');
    detail.className = 'detail';
    el.append(name, bar, detail);
    this.list.append(el);
    return { el, bar, detail };
  }

  private settle(li: HTMLLIElement, state: RowState): void {
    li.dataset.state = state;
    const bar = li.querySelector('progress');
    if (bar && state === 'done') {
      if (!bar.hasAttribute('value')) bar.max = 1;
      bar.value = bar.max;
    }
  }
}

/** Average bytes per second over the phase so far. */
function rate(ph: PhaseProgress): number {
  return ph.loaded / (Math.max(ph.tLast - ph.t0, 1) / 1000);
}

/** A determinate bar when the total is known, an indeterminate (busy) one otherwise. */
function setBar(bar: HTMLProgressElement, value: number, max: number | undefined): void {
  if (max === undefined || max <= 0) {
    bar.removeAttribute('value');
    return;
  }
  bar.max = max;
  bar.value = Math.min(value, max);
}
