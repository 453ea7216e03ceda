// The stats panel: figures from engine.stats() and the last answer's `tessera` block, in groups. The
// panel is a table of figures, so a new number is one entry in FIGURE_GROUPS, with no layout code to
// touch. Each value is rendered into <dd data-stat="<id>">.

import type { EngineStats, MediaInfo, TesseraInfo } from '../src/engine/types';
import { formatBytes, formatMs, formatRate } from './format';

export interface StatsInput {
  stats: EngineStats;
  /** The last finished answer's tessera block. */
  last?: TesseraInfo;
  /** True when the last answer's image encode was the encoder's first (it compiled its kernels). */
  lastEncodeWasFirst?: boolean;
}

interface Figure {
  id: string;
  label: string;
  /** Undefined renders as a dash (not known yet). */
  value: (s: StatsInput) => string | undefined;
  /** Longer explanation, shown as a tooltip. */
  title?: string;
}

export interface FigureGroup {
  id: string;
  title: string;
  figures: Figure[];
}

const SOURCE_NAMES: Record<MediaInfo['source'], string> = {
  memory: 'memory',
  inflight: 'memory (joined)',
  persistent: 'IndexedDB',
  encoded: 'encoded',
  given: 'sent with the request',
  'prefix-cache': 'prefix cache (no embeddings needed)',
};

const BACKEND_NAMES: Record<EngineStats['device']['backend'], string> = {
  webgpu: 'WebGPU',
  wasm: 'CPU (WebAssembly)',
  cpu: 'CPU (onnxruntime)',
};

const FIGURE_GROUPS: FigureGroup[] = [
  {
    id: 'device',
    title: 'Runs on',
    figures: [
      {
        id: 'backend',
        label: 'Backend',
        value: ({ stats }) => BACKEND_NAMES[stats.device.backend],
        title: 'why this backend: engine.stats().device.reason',
      },
    ],
  },
  {
    id: 'answer',
    title: 'Last answer',
    figures: [
      { id: 'ttft', label: 'Time to first token', value: ({ last }) => last && formatMs(last.timings.ttftMs) },
      {
        id: 'prefill-rate',
        label: 'Prefill',
        title: 'prompt tokens computed (image rows included; tokens taken from the prefix cache excluded) per second of prefill',
        value: ({ last }) =>
          last && last.timings.prefillMs > 0
            ? formatRate((last.promptTokens - last.cachedTokens) / (last.timings.prefillMs / 1000), 'tok/s')
            : undefined,
      },
      {
        id: 'cached-tokens',
        label: 'Prompt tokens from the prefix cache',
        title: 'KV blocks reused from earlier turns (same tokens and same images): not prefilled again',
        value: ({ last }) => last && `${last.cachedTokens} of ${last.promptTokens}`,
      },
      {
        id: 'decode-rate',
        label: 'Decode',
        title: 'generated tokens after the first, per second of decode',
        value: ({ last }) => (last && last.timings.decodeMs > 0 ? formatRate(last.timings.decodeTokensPerSecond, 'tok/s') : undefined),
      },
      { id: 'tokens', label: 'Tokens (prompt + answer)', value: ({ last }) => last && `${last.promptTokens} + ${last.tokenIds.length}` },
      {
        id: 'encode',
        label: 'Image encode',
        title: "vision tower + connector in the encoder worker; the worker's first image also compiles its kernels",
        value: ({ last, lastEncodeWasFirst }) =>
          last && last.media.length > 0
            ? `${formatMs(last.timings.encodeMs)}${lastEncodeWasFirst ? ' (first: compiled kernels)' : ''}`
            : undefined,
      },
      {
        id: 'image-source',
        label: 'Image embeddings from',
        value: ({ last }) => last && (last.media.length > 0 ? last.media.map((m) => SOURCE_NAMES[m.source]).join(', ') : 'no image'),
      },
    ],
  },
  {
    id: 'encoder-cache',
    title: 'Encoder cache',
    figures: [
      { id: 'cache-memory', label: 'Memory hits', value: ({ stats }) => String(stats.encoder.memoryHits + stats.encoder.inflightJoins) },
      { id: 'cache-idb', label: 'IndexedDB hits', value: ({ stats }) => String(stats.encoder.persistentHits) },
      { id: 'cache-encoded', label: 'Encoded', value: ({ stats }) => String(stats.encoder.encodes) },
      {
        id: 'cache-bytes',
        label: 'Held (memory / IndexedDB)',
        value: ({ stats }) => `${formatBytes(stats.encoder.memoryBytes)} / ${formatBytes(stats.encoder.persistentBytes)}`,
      },
    ],
  },
  {
    id: 'gpu',
    title: 'GPU memory (this page)',
    figures: [
      {
        id: 'gpu-live',
        label: 'In use / peak',
        title: "every buffer Tessera holds on this page's device; encoder workers hold their own devices",
        value: ({ stats }) => `${formatBytes(stats.gpuMemory.bytesLive)} / ${formatBytes(stats.gpuMemory.peakBytes)}`,
      },
      { id: 'gpu-weights', label: 'Weights', value: ({ stats }) => formatBytes(stats.weightBytes) },
      { id: 'gpu-kv', label: 'KV cache', value: ({ stats }) => formatBytes(stats.kvCacheBytes) },
    ],
  },
  {
    id: 'kv',
    title: 'KV cache',
    figures: [
      {
        id: 'kv-blocks',
        label: 'Blocks in use',
        value: ({ stats }) => `${stats.kv.numBlocks - stats.kv.numFreeBlocks} of ${stats.kv.numBlocks}`,
      },
      { id: 'kv-block-size', label: 'Tokens per block', value: ({ stats }) => String(stats.kv.blockSize) },
    ],
  },
  {
    id: 'requests',
    title: 'Requests',
    figures: [
      { id: 'requests', label: 'Answered', value: ({ stats }) => String(stats.requests - stats.failedRequests) },
      { id: 'requests-failed', label: 'Failed or stopped', value: ({ stats }) => String(stats.failedRequests) },
    ],
  },
  {
    id: 'scheduler',
    title: 'Scheduler',
    figures: [
      {
        id: 'queues',
        label: 'Requests running / waiting',
        value: ({ stats }) => `${stats.scheduler.numRunning} / ${stats.scheduler.numWaiting}`,
      },
      {
        id: 'batch',
        label: 'Rows per step (median / max)',
        title: 'tokens computed per model step over recent steps: decode rows of every running request plus prefill chunks',
        value: ({ stats }) => `${stats.scheduler.batchRows.p50} / ${stats.scheduler.batchRows.max}`,
      },
      {
        id: 'prefix-hits',
        label: 'Prefix-cache hits',
        value: ({ stats }) =>
          `${stats.scheduler.prefixHitTokens} tokens (${(stats.scheduler.prefixHitRate * 100).toFixed(0)}% of ${stats.scheduler.prefixQueryTokens})`,
      },
      { id: 'preemptions', label: 'Preemptions', value: ({ stats }) => String(stats.scheduler.numPreemptions) },
      {
        id: 'stalls',
        label: 'Waits for an image',
        title: 'prefill chunks cut before an image whose embeddings were not ready (the encoder budget)',
        value: ({ stats }) => String(stats.scheduler.numDoorstepStalls),
      },
    ],
  },
];

/** Renders the groups once, then updates values in place (cheap enough to call per streamed token). */
export class StatsPanel {
  private cells = new Map<string, HTMLElement>();

  constructor(
    private readonly el: HTMLElement,
    private readonly groups: FigureGroup[] = FIGURE_GROUPS,
  ) {}

  update(input: StatsInput): void {
    if (this.cells.size === 0) this.build();
    for (const g of this.groups) {
      for (const f of g.figures) this.cells.get(f.id)!.textContent = f.value(input) ?? '–';
    }
  }

  private build(): void {
    this.el.replaceChildren(
      ...this.groups.map((g) => {
        const section = document.createElement('section');
        section.dataset.group = g.id;
        const h = document.createElement('h3');
        h.id = `stats-${g.id}`;
        h.textContent = g.title;
        section.setAttribute('aria-labelledby', h.id);
        const dl = document.createElement('dl');
        for (const f of g.figures) {
          const dt = document.createElement('dt');
          dt.textContent = f.label;
          if (f.title) dt.title = f.title;
          const dd = document.createElement('dd');
          dd.dataset.stat = f.id;
          this.cells.set(f.id, dd);
          dl.append(dt, dd);
        }
        section.append(h, dl);
        return section;
      }),
    );
  }
}
