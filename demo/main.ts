// Demo page entry. On load: check WebGPU (and say what to do without it), list the bundled models, attach
// the sample image. Then Load (progress per file, kernel compile, encoder start), then chat. `?run`
// loads the default model and asks the default question at once (the Playwright tests use it). The video
// picker is enabled only while a checkpoint with video settings (SmolVLM2) is loaded; a video already in
// the tray when another checkpoint is loaded is sent anyway, and its turn shows VideoNotSupportedError.
// Likewise audio (a file, or a recording from the microphone) and Transcribe are enabled only for a
// checkpoint with an audio encoder (Voxtral); an audio part sent to another shows AudioNotSupportedError.
// `?run&model=<id>&record=<seconds>` loads that bundled model, records that long, and asks.

import { createEngine } from '../src/engine/create-browser';
import type { Engine } from '../src/engine/engine';
import type { TesseraInfo } from '../src/engine/types';
import {
  AttachmentTray,
  AUDIO_ACCEPT,
  attachmentFromBlob,
  audioAttachment,
  kindOfFile,
  VIDEO_ACCEPT,
  videoAttachment,
} from './attachments';
import { formatDuration, startRecording, type Recording } from './audio-capture';
import { Chat } from './chat';
import { errorParts, renderError } from './error-view';
import { formatMs } from './format';
import { LoadProgressView } from './load-progress';
import { ModelPicker } from './model-picker';
import { setUpSelfCheck } from './selfcheck';
import { StatsPanel } from './stats-panel';
import { StoragePanel } from './storage-panel';
import { checkWebGpu, renderWebGpuCheck } from './webgpu-check';

declare global {
  interface Window {
    /** The loaded engine, for the console (engine.stats(), engine.encoderCache.inspect()). */
    tesseraEngine?: Engine;
  }
}

const $ = <T extends HTMLElement>(sel: string) => document.querySelector<T>(sel)!;
const DEFAULT_IMAGE_PROMPT = 'Can you describe this image?';
const DEFAULT_AUDIO_PROMPT = 'What is said in this recording?';
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
const audioInput = $<HTMLInputElement>('#attach-audio');
const recordButton = $<HTMLButtonElement>('#record');
const transcribeBox = $<HTMLInputElement>('#transcribe');
const audioHint = $<HTMLParagraphElement>('#audio-hint');
const chatStatus = $<HTMLSpanElement>('#chat-status');
const deviceSelect = $<HTMLSelectElement>('#device');
const persistBox = $<HTMLInputElement>('#persist-storage');
const requireStorageBox = $<HTMLInputElement>('#require-storage');

let engine: Engine | undefined;
let loadedFromCache = false;
let loading = false;
let lastInfo: TesseraInfo | undefined;
let lastEncodeWasFirst = false;
let statsFrame = 0;
let loadFailure: unknown;
let recording: { run: Recording; timer: number } | undefined;
let recordings = 0;

const picker = new ModelPicker(() => updateControls());
const progress = new LoadProgressView($<HTMLOListElement>('#load-progress'));
const tray = new AttachmentTray($<HTMLDivElement>('#attachments'), () => updateControls());
const stats = new StatsPanel($<HTMLDivElement>('#stats-groups'));
const storage = new StoragePanel($<HTMLElement>('#storage'), () => engine?.stats().storage);
const chat = new Chat($<HTMLOListElement>('#messages'), {
  onState(state, status) {
    body.dataset.chat = state;
    chatStatus.textContent = status;
    updateControls();
    if (state !== 'running') void storage.refresh(); // the answer's embeddings went into the encoder cache
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
  // Without WebGPU a checkpoint with ONNX graphs still runs, on the CPU backend (WebAssembly).
  loadButton.disabled = busy;
  runButton.disabled = !engine || busy;
  stopButton.disabled = !chat.running;
  newChatButton.disabled = busy;
  updateVideoPicker();
  updateAudioControls();
}

/** The loaded checkpoint's audio settings: tokens per 30-second chunk (Voxtral), or undefined. */
function audioTokensPerChunk(): number | undefined {
  const processor = engine?.processor;
  return processor && 'tokensPerChunk' in processor ? processor.tokensPerChunk : undefined;
}

/** Audio needs an audio encoder (Voxtral); a recording in progress keeps its button. */
function updateAudioControls(): void {
  const tokens = audioTokensPerChunk();
  const busy = loading || chat.running;
  audioInput.disabled = tokens === undefined;
  audioInput.closest('label')!.dataset.disabled = String(tokens === undefined);
  recordButton.disabled = (tokens === undefined || busy) && !recording;
  transcribeBox.disabled = tokens === undefined || busy;
  if (tokens === undefined) transcribeBox.checked = false;
  promptInput.disabled = transcribeBox.checked;
  if (tokens !== undefined) {
    audioHint.textContent = `Audio (WAV, MP3, Ogg/Opus, FLAC, M4A, WebM) or a recording: cut into 30-second chunks of ${tokens} tokens each, every chunk cached on its own. Transcribe sends one audio attachment and no text.`;
  } else if (engine) {
    audioHint.textContent = 'No audio with this checkpoint: it has no audio encoder. Load a Voxtral checkpoint for audio.';
  } else {
    audioHint.textContent = 'Audio (a file or the microphone) needs a checkpoint with an audio encoder, such as Voxtral: load one first.';
  }
}

async function toggleRecording(): Promise<void> {
  if (recording) {
    const { run, timer } = recording;
    recording = undefined;
    clearInterval(timer);
    recordButton.textContent = 'Record';
    recordButton.setAttribute('aria-pressed', 'false');
    const seconds = run.elapsed();
    const blob = await run.stop();
    tray.add(await audioAttachment(blob, `recording-${++recordings}.webm`));
    chatStatus.textContent = `Recorded ${formatDuration(seconds)}.`;
    updateControls();
    return;
  }
  try {
    const run = await startRecording();
    const timer = window.setInterval(() => {
      recordButton.textContent = `Stop recording (${formatDuration(run.elapsed())})`;
    }, 250);
    recording = { run, timer };
    recordButton.textContent = 'Stop recording (0:00)';
    recordButton.setAttribute('aria-pressed', 'true');
    chatStatus.textContent = 'Recording from the microphone…';
  } catch (e) {
    chatStatus.textContent = `Cannot record: ${(e as Error).message}`;
  }
  updateControls();
}

/** Video needs the checkpoint's video settings (SmolVLM2: preprocessor_config.json "video_sampling"; Qwen-VL: its video processor). */
function updateVideoPicker(): void {
  const processor = engine?.processor;
  const video =
    processor && 'config' in processor ? processor.config.video : processor && 'video' in processor ? processor.video : undefined;
  videoInput.disabled = !video;
  videoInput.closest('label')!.dataset.disabled = String(!video);
  if (video) {
    videoHint.textContent = `Video (MP4, WebM): sampled at ${video.fps} frame${video.fps === 1 ? '' : 's'} per second, ${video.maxFrames} frames at most; the answer shows them.`;
  } else if (engine) {
    videoHint.textContent =
      'No video with this checkpoint: it has no video settings (no "video_sampling" in preprocessor_config.json). Load a SmolVLM2 or Qwen-VL checkpoint for video.';
  } else {
    videoHint.textContent = 'Video (MP4, WebM) needs a checkpoint with video settings, such as SmolVLM2 or Qwen-VL: load one first.';
  }
}

/**
 * A load or a request that gets nowhere for this long fails with EngineStalledError, which names what the
 * engine waited on (src/engine/stall.ts), instead of a page that says "Loading…" forever. Downloads, GPU
 * operations and steps all count as getting somewhere. `?stall=<ms>` sets it (the tests use a shorter one).
 */
function stallTimeoutMs(): number {
  const asked = Number(new URLSearchParams(location.search).get('stall'));
  return asked > 0 && Number.isFinite(asked) ? asked : DEFAULT_STALL_MS;
}

const DEFAULT_STALL_MS = 300_000;

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
      device: deviceSelect.value as 'auto' | 'webgpu' | 'wasm',
      storage: { persist: persistBox.checked, requireCache: requireStorageBox.checked },
      stallTimeoutMs: stallTimeoutMs(),
      onProgress: (p) => {
        if (p.phase === 'download') downloaded = true;
        progress.update(p);
      },
    });
    window.tesseraEngine = engine;
    loadedFromCache = !downloaded;
    const ms = progress.finish();
    const device = engine.stats().device;
    body.dataset.backend = device.backend;
    loadStatus.textContent =
      `${choice.label} is ready (loaded in ${formatMs(ms)}${loadedFromCache ? ', weights from this browser’s storage or disk' : ''}); ` +
      `it runs on ${device.backend === 'webgpu' ? 'WebGPU' : 'the CPU (WebAssembly), slower than a GPU'}: ${device.reason}.`;
    if (audioTokensPerChunk() !== undefined && promptInput.value === DEFAULT_IMAGE_PROMPT) {
      // An audio checkpoint has no vision tower: the sample image would be refused (ImageNotSupportedError).
      for (const a of tray.take()) if (a.kind === 'audio') tray.add(a);
      promptInput.value = DEFAULT_AUDIO_PROMPT;
    }
    body.dataset.model = 'ready';
    refreshStats();
    await storage.refresh();
    return true;
  } catch (e) {
    loadFailure = e;
    progress.fail();
    loadStatus.textContent = `Loading ${choice.label} failed.`;
    loadError.replaceChildren(renderError(e));
    await storage.refresh(); // after a StorageQuotaError: what is stored, to delete
    body.dataset.model = 'error';
    return false;
  } finally {
    loading = false;
    updateControls();
  }
}

async function ask(): Promise<void> {
  if (!engine || chat.running || loading) return;
  const options = { maxTokens: Number(maxTokensInput.value) || 32, temperature: Number(temperatureInput.value) || 0 };
  if (transcribeBox.checked) {
    const [only, ...rest] = tray.items;
    if (only?.kind !== 'audio' || rest.length > 0) {
      chatStatus.textContent = 'Transcribe takes exactly one audio attachment (a file or a recording) and nothing else.';
      return;
    }
    tray.take();
    await chat.transcribe(engine, only, options, loadedFromCache);
    return;
  }
  const text = promptInput.value;
  const attachments = tray.take();
  if (text.trim() === '' && attachments.length === 0) return;
  promptInput.value = '';
  await chat.ask(engine, text, attachments, options, loadedFromCache);
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
  audioInput.accept = AUDIO_ACCEPT;
  audioInput.addEventListener('change', async () => {
    for (const f of Array.from(audioInput.files ?? [])) tray.add(await audioAttachment(f, f.name));
    audioInput.value = '';
  });
  recordButton.addEventListener('click', () => void toggleRecording());
  transcribeBox.addEventListener('change', () => updateControls());
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
  const params = new URLSearchParams(location.search);
  // ?device=webgpu|wasm|auto picks the backend before anything loads (as the "Run on" menu does).
  const device = params.get('device');
  if (device && [...deviceSelect.options].some((o) => o.value === device)) deviceSelect.value = device;
  wire();
  setUpSelfCheck();
  updateControls();
  const [check] = await Promise.all([checkWebGpu(), picker.loadBundled(), attachSample(), storage.refresh()]);
  renderWebGpuCheck($<HTMLDivElement>('#webgpu-status'), check);
  body.dataset.webgpu = check.state;
  if (check.state !== 'ok') {
    const cpu = document.createElement('p');
    cpu.className = 'cpu-fallback';
    cpu.textContent =
      'Until then, a model with ONNX graphs (an onnx/ folder, as the bundled tiny ones and the onnx-community checkpoints have) still runs on this page on the CPU through WebAssembly: slower than a GPU, still private and offline.';
    $<HTMLDivElement>('#webgpu-status').append(cpu);
  }
  updateControls();
  if (params.has('run')) {
    if (params.get('model')) picker.selectBundled(params.get('model')!);
    const loaded = await load();
    const seconds = Number(params.get('record') ?? 0);
    if (loaded && seconds > 0) {
      await toggleRecording();
      await new Promise((r) => setTimeout(r, seconds * 1000));
      await toggleRecording();
      if (params.has('transcribe')) transcribeBox.checked = true;
    }
    if (loaded) await ask();
    else {
      const p = errorParts(loadFailure);
      window.tesseraRun = { error: `${p.name}: ${p.message}`, name: p.name, code: p.code };
      body.dataset.chat = 'error';
    }
  }
}

void start();
