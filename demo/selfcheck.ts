// Demo page, self-check section: the WebGPU adapter report and every kernel against its reference, on the
// page or in a Web Worker. `?selfcheck` in the URL starts the check on load, `?selfcheck=worker` runs it
// in the worker (the Playwright tests use both).

import * as Comlink from 'comlink';
import type { SelfCheckReport, SelfCheckWorkerApi } from '../src/protocol/selfcheck';
import { formatAdapterReport, formatCaseLine, formatSummary } from '../src/selfcheck/report';
import type { CaseResult } from '../src/selfcheck/runner';
import { runBrowserSelfCheck } from '../src/selfcheck/self-check';

type Where = 'page' | 'worker';

declare global {
  interface Window {
    /** Set when the self-check finishes, for tests and for anyone poking at the console. */
    tesseraSelfCheck?: (SelfCheckReport & { pass: boolean; where: Where }) | { error: string; where: Where };
  }
}

const buttons = [...document.querySelectorAll<HTMLButtonElement>('button[data-where]')];
const log = document.querySelector<HTMLPreElement>('#selfcheck-log')!;
const status = document.querySelector<HTMLSpanElement>('#selfcheck-status')!;

function print(line: string): void {
  log.textContent += `${line}\n`;
}

function setStatus(state: 'running' | 'pass' | 'fail', text: string): void {
  document.body.dataset.selfcheck = state;
  status.textContent = text;
  status.className = `status ${state === 'running' ? '' : state}`;
}

function onResult(r: CaseResult, i: number, total: number): void {
  print(formatCaseLine(r));
  status.textContent = `running… ${i + 1}/${total}`;
}

async function inWorker(): Promise<SelfCheckReport> {
  const worker = new Worker(new URL('../workers/selfcheck.worker.ts', import.meta.url), { type: 'module' });
  try {
    const api = Comlink.wrap<SelfCheckWorkerApi>(worker);
    return await api.run(Comlink.proxy(onResult));
  } finally {
    worker.terminate();
  }
}

async function selfCheck(where: Where): Promise<void> {
  for (const b of buttons) b.disabled = true;
  log.textContent = '';
  setStatus('running', 'running…');
  try {
    print(`running in the ${where === 'page' ? "page's main thread" : 'Web Worker'}`);
    const report = where === 'page' ? await runBrowserSelfCheck(onResult) : await inWorker();
    print('');
    for (const line of formatAdapterReport(report.adapter)) print(line);
    print('');
    print(formatSummary(report.results));
    const pass = report.results.every((r) => r.pass);
    window.tesseraSelfCheck = { ...report, pass, where };
    setStatus(pass ? 'pass' : 'fail', pass ? 'all kernels pass' : 'some kernels FAILED');
  } catch (e) {
    const err = e as Error;
    print(`${err.name}: ${err.message}`);
    window.tesseraSelfCheck = { error: `${err.name}: ${err.message}`, where };
    setStatus('fail', err.name);
  } finally {
    for (const b of buttons) b.disabled = false;
  }
}

export function setUpSelfCheck(): void {
  for (const b of buttons) b.addEventListener('click', () => void selfCheck(b.dataset.where as Where));
  const requested = new URLSearchParams(location.search).get('selfcheck');
  if (requested === null) return;
  document.querySelector<HTMLDetailsElement>('#selfcheck-section')!.open = true;
  void selfCheck(requested === 'worker' ? 'worker' : 'page');
}
