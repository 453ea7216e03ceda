// Demo page, chat section: load a checkpoint (a URL base, default the bundled tiny model), pick an image
// (default the bundled sample), ask, and watch the answer stream in. Progress, timings and errors show
// on the page. `?run` starts a request on load (the Playwright test uses it).

import { createEngine } from '../src/engine/create-browser';
import type { Engine } from '../src/engine/engine';
import type { ChatCompletionChunk, EngineProgress, TesseraInfo } from '../src/engine/types';

declare global {
  interface Window {
    /** The last finished request, for tests and the console. */
    tesseraRun?: { text: string; info: TesseraInfo; finishReason: string; loadedFromCache: boolean } | { error: string };
  }
}

const $ = <T extends HTMLElement>(sel: string) => document.querySelector<T>(sel)!;
const modelInput = $<HTMLInputElement>('#model-url');
const modelFilesInput = $<HTMLInputElement>('#model-files');
const imageInput = $<HTMLInputElement>('#image-file');
const preview = $<HTMLImageElement>('#image-preview');
const promptInput = $<HTMLTextAreaElement>('#prompt');
const maxTokensInput = $<HTMLInputElement>('#max-tokens');
const temperatureInput = $<HTMLInputElement>('#temperature');
const runButton = $<HTMLButtonElement>('#run');
const stopButton = $<HTMLButtonElement>('#stop');
const answer = $<HTMLDivElement>('#answer');
const statusLine = $<HTMLDivElement>('#chat-status');

let engine: Engine | undefined;
let engineModel = '';
let abort: AbortController | undefined;
let imageBytes: Uint8Array | undefined;

function setState(state: 'idle' | 'loading' | 'running' | 'done' | 'error', text: string): void {
  document.body.dataset.chat = state;
  statusLine.textContent = text;
}

async function defaultImage(): Promise<Uint8Array> {
  const res = await fetch('/sample.png');
  return new Uint8Array(await res.arrayBuffer());
}

function progressText(p: EngineProgress): string {
  if (p.phase === 'ready') return 'model ready';
  const pct = p.totalBytes ? ` ${Math.floor(((p.loadedBytes ?? 0) / p.totalBytes) * 100)}%` : '';
  return `${p.phase === 'download' ? 'downloading' : 'uploading to the GPU'} ${p.file}${pct}`;
}

/** Picked files win over the URL; either way the engine is kept while the choice stays the same. */
async function ensureEngine(): Promise<{ engine: Engine; fromCache: boolean }> {
  const files = modelFilesInput.files && modelFilesInput.files.length > 0 ? Array.from(modelFilesInput.files) : undefined;
  const key = files ? `files:${files.map((f) => `${f.name}:${f.size}`).join(',')}` : new URL(modelInput.value, location.href).href;
  if (engine && engineModel === key) return { engine, fromCache: true };
  engine?.destroy();
  engine = undefined;
  let downloaded = false;
  setState('loading', `loading ${files ? `${files.length} picked files` : key}`);
  engine = await createEngine({
    model: files ?? key,
    onProgress: (p) => {
      if (p.phase === 'download') downloaded = true;
      setState('loading', progressText(p));
    },
  });
  engineModel = key;
  return { engine, fromCache: !downloaded };
}

async function runOnce(): Promise<void> {
  runButton.disabled = true;
  stopButton.disabled = false;
  answer.textContent = '';
  abort = new AbortController();
  try {
    const { engine: e, fromCache } = await ensureEngine();
    imageBytes ??= await defaultImage();
    setState('running', 'encoding the image and prefilling…');
    const temperature = Number(temperatureInput.value) || 0;
    const stream = await e.chat.completions.create({
      messages: [{ role: 'user', content: [{ type: 'image', image: imageBytes }, { type: 'text', text: promptInput.value }] }],
      max_tokens: Number(maxTokensInput.value) || 32,
      temperature,
      stream: true,
      signal: abort.signal,
    });
    let last: ChatCompletionChunk | undefined;
    for await (const chunk of stream) {
      const delta = chunk.choices[0].delta.content;
      if (delta) answer.textContent += delta;
      if (answer.textContent) setState('running', 'generating…');
      last = chunk;
    }
    const info = last!.tessera!;
    const t = info.timings;
    window.tesseraRun = { text: answer.textContent ?? '', info, finishReason: last!.choices[0].finish_reason ?? '', loadedFromCache: fromCache };
    setState(
      'done',
      `${info.tokenIds.length} tokens (${last!.choices[0].finish_reason}); prompt ${info.promptTokens} tokens, ${info.numTiles} tiles; ` +
        `encode ${t.encodeMs.toFixed(0)} ms, prefill ${t.prefillMs.toFixed(0)} ms, TTFT ${t.ttftMs.toFixed(0)} ms, ` +
        `${t.decodeTokensPerSecond.toFixed(1)} tokens/s`,
    );
  } catch (err) {
    const e = err as Error;
    window.tesseraRun = { error: `${e.name}: ${e.message}` };
    setState('error', `${e.name}: ${e.message}`);
  } finally {
    runButton.disabled = false;
    stopButton.disabled = true;
  }
}

export function setUpChat(): void {
  imageInput.addEventListener('change', async () => {
    const file = imageInput.files?.[0];
    if (!file) return;
    imageBytes = new Uint8Array(await file.arrayBuffer());
    preview.src = URL.createObjectURL(file);
  });
  runButton.addEventListener('click', () => void runOnce());
  modelFilesInput.addEventListener('change', () => setState('idle', `${modelFilesInput.files?.length ?? 0} model files picked; press Ask`));
  stopButton.addEventListener('click', () => abort?.abort(new Error('stopped by the user')));
  setState('idle', 'ready: the bundled model has random weights, so its answers are noise');
  if (new URLSearchParams(location.search).has('run')) void runOnce();
}
