// Demo page entry. On load: check WebGPU (and say what to do without it), list the bundled models, attach
// the sample image. Then Load (progress per file, kernel compile, encoder start), then chat. `?run`
// loads the default model and asks the default question at once (the Playwright tests use it). The video
// picker is enabled only while a checkpoint with video settings (SmolVLM2) is loaded; a video already in
// the tray when another checkpoint is loaded is sent anyway, and its turn shows VideoNotSupportedError.

import { createEngine } from '../src/engine/create-browser';
import type { Engine } from '../src/engine/engine';
import type { TesseraInfo } from '../src/engine/types';
import { AttachmentTray, attachmentFromBlob, kindOfFile, VIDEO_ACCEPT, videoAttachment } from './attachments';
import { Chat } from './chat';
import { errorParts, renderError } from './error-view';
import { formatMs } from './format';
import { LoadProgressView } from './load-progress';
import { ModelPicker } from './model-picker';
import { setUpSelfCheck } from './selfcheck';
import { StatsPanel } from './stats-panel';
import { checkWebGpu, renderWebGpuCheck } from './webgpu-check';

declare global {
  interface Window {
    /** The loaded engine, for the console (engine.stats(), engine.encoderCache.inspect()). */
    tesseraEngine?: Engine;
  }
}

const $ = <T extends HTMLElement>(sel: string) => document.querySelector<T>(sel)!;
const body = document.body;
const loadButton = $<HTMLButtonElement>('#load');
const loadStatus = $<HTMLSpanElement>('#load-status');
const loadError = $<HTMLDivElement>('#load-error');
const runButton = $<HTMLButtonElement>('#run');
const stopButton = $<HTMLButtonElement>('#stop');
const newChatButton = $<HTMLButtonElement>('#new-chat');
const promptInput = $<HTMLTextAreaElement>('#prompt');
const maxTokensInput = $<HTMLInputElement>('#max-tokens');
const temperatureInput = $<HTMLInputElement>('#temperature');
const attachInput = $<HTMLInputElement>('#attach-file');
const videoInput = $<HTMLInputElement>('#attach-video');
const videoHint = $<HTMLParagraphElement>('#video-hint');
const chatStatus = $<HTMLSpanElement>('#chat-status');

let engine: Engine | undefined;
let loadedFromCache = false;
let loading = false;
let webGpuOk = false;
let lastInfo: TesseraInfo | undefined;
let lastEncodeWasFirst = false;
let statsFrame = 0;
let loadFailure: unknown;

const picker = new ModelPicker(() => updateControls());
const progress = new LoadProgressView($<HTMLOListElement>('#load-progress'));
const tray = new AttachmentTray($<HTMLDivElement>('#attachments'), () => updateControls());
const stats = new StatsPanel($<HTMLDivElement>('#stats-groups'));
const chat = new Chat($<HTMLOListElement>('#messages'), {
  onState(state, status) {
    body.dataset.chat = state;
    chatStatus.textContent = status;
    updateControls();
  },
  onStats(last, first) {
    if (last) {
      lastInfo = last;
      lastEncodeWasFirst = first;
    }
    // Per streamed token at most once a frame.
    cancelAnimationFrame(statsFrame);
    statsFrame = requestAnimationFrame(refreshStats);
  },
});

function refreshStats(): void {
  if (engine) stats.update({ stats: engine.stats(), last: lastInfo, lastEncodeWasFirst });
}

function updateControls(): void {
  const busy = loading || chat.running;
  loadButton.disabled = !webGpuOk || busy;
  runButton.disabled = !engine || busy;
  stopButton.disabled = !chat.running;
  newChatButton.disabled = busy;
  updateVideoPicker();
}

/** Video needs the checkpoint's video settings (preprocessor_config.json "video_sampling"). */
function updateVideoPicker(): void {
  const processor = engine?.processor;
  const video = processor && 'config' in processor ? processor.config.video : undefined;
  videoInput.disabled = !video;
  videoInput.closest('label')!.dataset.disabled = String(!video);
  if (video) {
    videoHint.textContent = `Video (MP4, WebM): sampled at ${video.fps} frame${video.fps === 1 ? '' : 's'} per second, ${video.maxFrames} frames at most; the answer shows them.`;
  } else if (engine) {
    videoHint.textContent =
      'No video with this checkpoint: it has no video settings (no "video_sampling" in preprocessor_config.json). Load a SmolVLM2 checkpoint for video.';
  } else {
    videoHint.textContent = 'Video (MP4, WebM) needs a checkpoint with video settings, such as SmolVLM2: load one first.';
  }
}

async function load(): Promise<boolean> {
  const choice = picker.choice();
  if (typeof choice === 'string') {
    loadStatus.textContent = choice;
    return false;
  }
  loading = true;
  body.dataset.model = 'loading';
  updateControls();
  engine?.destroy();
  engine = window.tesseraEngine = undefined;
  lastInfo = undefined;
  loadError.replaceChildren();
  loadStatus.textContent = `Loading ${choice.label}…`;
  progress.start();
  let downloaded = false;
  try {
    engine = await createEngine({
      model: choice.model,
      modelFiles: choice.modelFiles,
      onProgress: (p) => {
        if (p.phase === 'download') downloaded = true;
        progress.update(p);
      },
    });
    window.tesseraEngine = engine;
    loadedFromCache = !downloaded;
    const ms = progress.finish();
    loadStatus.textContent = `${choice.label} is ready (loaded in ${formatMs(ms)}${loadedFromCache ? ', weights from this browser’s storage or disk' : ''}).`;
    body.dataset.model = 'ready';
    refreshStats();
    return true;
  } catch (e) {
    loadFailure = e;
    progress.fail();
    loadStatus.textContent = `Loading ${choice.label} failed.`;
    loadError.replaceChildren(renderError(e));
    body.dataset.model = 'error';
    return false;
  } finally {
    loading = false;
    updateControls();
  }
}

async function ask(): Promise<void> {
  if (!engine || chat.running || loading) return;
  const text = promptInput.value;
  const attachments = tray.take();
  if (text.trim() === '' && attachments.length === 0) return;
  promptInput.value = '';
  await chat.ask(
    engine,
    text,
    attachments,
    { maxTokens: Number(maxTokensInput.value) || 32, temperature: Number(temperatureInput.value) || 0 },
    loadedFromCache,
  );
  promptInput.focus();
}

async function attachSample(): Promise<void> {
  const res = await fetch('/sample.png');
  if (res.ok) tray.add(await attachmentFromBlob(await res.blob(), 'sample.png'));
}

function wire(): void {
  loadButton.addEventListener('click', () => void load());
  $<HTMLFormElement>('#composer').addEventListener('submit', (e) => {
    e.preventDefault();
    void ask();
  });
  promptInput.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      void ask();
    }
  });
  stopButton.addEventListener('click', () => chat.stop());
  newChatButton.addEventListener('click', () => {
    chat.clear();
    lastInfo = undefined;
    body.dataset.chat = 'idle';
    chatStatus.textContent = '';
    tray.take();
    void attachSample();
    refreshStats();
  });
  attachInput.addEventListener('change', async () => {
    for (const f of Array.from(attachInput.files ?? [])) {
      if (kindOfFile(f) === 'image') tray.add(await attachmentFromBlob(f, f.name));
      else chatStatus.textContent = `${f.name} is not an image; only images can be attached here.`;
    }
    attachInput.value = '';
  });
  videoInput.accept = VIDEO_ACCEPT;
  videoInput.addEventListener('change', () => {
    for (const f of Array.from(videoInput.files ?? [])) {
      if (kindOfFile(f) === 'video') tray.add(videoAttachment(f));
      else chatStatus.textContent = `${f.name} is not an MP4, WebM, MKV or MOV video.`;
    }
    videoInput.value = '';
  });
}

async function start(): Promise<void> {
  wire();
  setUpSelfCheck();
  updateControls();
  const [check] = await Promise.all([checkWebGpu(), picker.loadBundled(), attachSample()]);
  renderWebGpuCheck($<HTMLDivElement>('#webgpu-status'), check);
  body.dataset.webgpu = check.state;
  webGpuOk = check.state === 'ok';
  updateControls();
  if (new URLSearchParams(location.search).has('run')) {
    if (!webGpuOk) return;
    if (await load()) await ask();
    else {
      const p = errorParts(loadFailure);
      window.tesseraRun = { error: `${p.name}: ${p.message}`, name: p.name, code: p.code };
      body.dataset.chat = 'error';
    }
  }
}

void start();
