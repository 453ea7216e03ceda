// A mix of requests as careless or hostile callers send them, for the fault suite (test/gpu/fault-suite)
// and the soak (bench/soak): good image, text and sampled requests, cancellations before and during a
// stream, and bad inputs, each with the outcome it must have. Only the public engine API is used
// (chat.completions.create, stats()), so the mix keeps working whatever the engine does inside.
//
// Outcomes are judged by the errors' stable `code`, not instanceof: the soak drives the built package
// (dist/node.js), whose error classes are not the ones in src/.
//
// Isolation check: every good greedy request is answered with the same tokens as the first request of
// the same kind and image (and, when given, a reference), whatever ran beside it.

import sharp from 'sharp';
import type { Engine } from '../../src/engine/engine';
import type { ChatCompletionChunk, ChatCompletionRequest, ChatContentPart } from '../../src/engine/types';
export const KINDS = [
  'image',
  'text',
  'sampled',
  'stream',
  'cancel-before',
  'cancel-mid',
  'bad-top-p',
  'bad-temperature',
  'bad-image-bytes',
  'bad-image-type',
  'bad-data-url',
  'too-many-images',
  'too-long',
  'bad-max-tokens',
  'unknown-part',
] as const;
export type Kind = (typeof KINDS)[number];

/**
 * The code of the named error each bad or cancelled kind must fail with (alone). 'cancel-mid' has none: a
 * stream its caller aborts ends quietly, with no finish chunk (as the openai client's streams end).
 */
export const EXPECTED_ERROR: Partial<Record<Kind, string>> = {
  'cancel-before': 'ABORTED',
  'bad-top-p': 'INVALID_REQUEST',
  'bad-temperature': 'INVALID_REQUEST',
  'bad-image-bytes': 'IMAGE_DECODE',
  'bad-image-type': 'INVALID_MESSAGE',
  'bad-data-url': 'INVALID_MESSAGE',
  'too-many-images': 'TOO_MANY_IMAGES',
  'too-long': 'CONTEXT_LENGTH',
  'bad-max-tokens': 'INVALID_REQUEST',
  'unknown-part': 'INVALID_MESSAGE',
};

export interface MixItem {
  index: number;
  kind: Kind;
  /** Which of the images (good image kinds), for the isolation check. */
  image: number;
}

export interface MixResult {
  item: MixItem;
  ok: boolean;
  /** The error's name when the request failed. */
  error?: string;
  /** Why the outcome is wrong (undefined when it is the expected one). */
  mismatch?: string;
  ms: number;
}

/** `count` items cycling through every kind, images chosen by a fixed stride (deterministic). */
export function mixItems(count: number, numImages: number): MixItem[] {
  return Array.from({ length: count }, (_, index) => ({ index, kind: KINDS[index % KINDS.length], image: (index * 7) % numImages }));
}

/** Small PNGs of different colours and sizes (different tile counts, distinct cache keys). */
export async function mixImages(count: number): Promise<Uint8Array[]> {
  return Promise.all(
    Array.from({ length: count }, (_, i) =>
      sharp({
        create: {
          width: 120 + 70 * (i % 4),
          height: 90 + 50 * (i % 3),
          channels: 3,
          background: { r: (i * 53) % 256, g: (i * 97) % 256, b: (i * 29) % 256 },
        },
      })
        .png()
        .toBuffer()
        .then((b) => new Uint8Array(b)),
    ),
  );
}

function request(item: MixItem, images: Uint8Array[], signal?: AbortSignal): ChatCompletionRequest {
  const img: ChatContentPart = { type: 'image', image: images[item.image] };
  const ask = (parts: unknown[], extra: Partial<ChatCompletionRequest> = {}): ChatCompletionRequest =>
    ({
      messages: [{ role: 'user', content: [...parts, { type: 'text', text: 'What is in this picture?' }] }],
      max_tokens: 3,
      signal,
      ...extra,
    }) as ChatCompletionRequest;
  switch (item.kind) {
    case 'image':
    case 'cancel-before':
      return ask([img]);
    case 'text':
      return { messages: [{ role: 'user', content: `Say something about the number ${item.image}.` }], max_tokens: 3, signal };
    case 'sampled':
      return ask([img], { temperature: 0.8, top_p: 0.9, top_k: 20, seed: item.index });
    case 'stream':
    case 'cancel-mid':
      return ask([img], { stream: true, max_tokens: item.kind === 'cancel-mid' ? 24 : 3 });
    case 'bad-top-p':
      return ask([img], { temperature: 0.8, top_p: 0 });
    case 'bad-temperature':
      return ask([img], { temperature: Number.NaN });
    case 'bad-image-bytes':
      return ask([{ type: 'image', image: new TextEncoder().encode('this is not an image at all') }]);
    case 'bad-image-type':
      return ask([{ type: 'image', image: 12345 }]);
    case 'bad-data-url':
      return ask([{ type: 'image_url', image_url: { url: 'data:image/png;base64,%%%not-base64%%%' } }]);
    case 'too-many-images':
      return ask(Array.from({ length: 40 }, () => img));
    case 'too-long':
      return { messages: [{ role: 'user', content: 'word '.repeat(6000) }], max_tokens: 3, signal };
    case 'bad-max-tokens':
      return ask([img], { max_tokens: -1 });
    case 'unknown-part':
      return ask([{ type: 'video', video: 'x' }]);
  }
}

/** Run one item and judge its outcome. `reference`: first greedy answer per (kind, image), filled as it goes. */
export async function runItem(engine: Engine, item: MixItem, images: Uint8Array[], reference: Map<string, number[]>): Promise<MixResult> {
  const t0 = performance.now();
  const abort = new AbortController();
  if (item.kind === 'cancel-before') abort.abort(new Error('cancelled before the request'));
  const req = request(item, images, abort.signal);
  const expected = EXPECTED_ERROR[item.kind];
  let tokenIds: number[] | undefined;
  try {
    if (req.stream) {
      let last: ChatCompletionChunk | undefined;
      for await (const chunk of await engine.chat.completions.create({ ...req, stream: true })) {
        last = chunk;
        if (item.kind === 'cancel-mid' && chunk.choices[0].delta.content !== undefined) abort.abort(new Error('cancelled mid-stream'));
      }
      if (item.kind === 'cancel-mid') {
        const ms = performance.now() - t0;
        // The engine counts it among its failed requests; so does the mix.
        if (!last?.tessera) return { item, ok: false, error: 'aborted (the stream ended where it was cancelled)', ms };
        return { item, ok: true, ms, mismatch: 'cancel-mid ran to its finish chunk instead of ending where it was cancelled' };
      }
      tokenIds = last?.tessera?.tokenIds;
    } else {
      tokenIds = (await engine.chat.completions.create({ ...req, stream: false })).tessera.tokenIds;
    }
  } catch (e) {
    const name = (e as Error)?.name ?? String(e);
    const code = (e as { code?: unknown })?.code;
    const ms = performance.now() - t0;
    if (expected && code === expected) return { item, ok: false, error: name, ms };
    return { item, ok: false, error: name, ms, mismatch: `${item.kind} failed with ${name} (${String(code)}): ${(e as Error)?.message}` };
  }
  const ms = performance.now() - t0;
  if (expected) return { item, ok: true, ms, mismatch: `${item.kind} succeeded but must fail with ${expected}` };
  if (!tokenIds || tokenIds.length === 0) return { item, ok: true, ms, mismatch: `${item.kind} answered no tokens` };
  if (item.kind !== 'sampled') {
    const key = `${item.kind === 'stream' ? 'image' : item.kind}:${item.image}`;
    const want = reference.get(key);
    if (!want) reference.set(key, tokenIds);
    else if (want.join(',') !== tokenIds.join(','))
      return { item, ok: true, ms, mismatch: `${key} answered [${tokenIds}] but alone it answers [${want}]` };
  }
  return { item, ok: true, ms };
}

/** Run `items` with at most `concurrency` in flight; `onResult` sees each as it finishes. */
export async function runMix(
  engine: Engine,
  items: readonly MixItem[],
  images: Uint8Array[],
  concurrency: number,
  reference: Map<string, number[]>,
  onResult?: (r: MixResult) => void,
): Promise<MixResult[]> {
  const results: MixResult[] = [];
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const r = await runItem(engine, items[next++], images, reference);
      results.push(r);
      onResult?.(r);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return results;
}

/**
 * The memory figures that must stay flat once idle: GPU bytes held by requests (pool buffers handed out),
 * KV blocks free, encoder cache references; and the totals (every GPU buffer, RSS), which may still grow
 * by what is built once and kept (a step plan per row bucket the first time a batch of that size runs).
 */
export function memoryFigures(engine: Engine): {
  gpuBytesLive: number;
  gpuPoolBytesInUse: number;
  kvFreeBlocks: number;
  kvBlocks: number;
  cacheRefs: number;
  rssBytes: number;
  /** V8 heap in use (RSS minus this is native: Dawn, sharp, buffers). */
  heapUsedBytes: number;
} {
  const s = engine.stats();
  return {
    gpuBytesLive: s.gpuMemory.bytesLive,
    gpuPoolBytesInUse: s.gpuPool.bytesLive,
    kvFreeBlocks: s.kv.numFreeBlocks,
    kvBlocks: s.kv.numBlocks,
    cacheRefs: s.encoder.referencedEntries,
    rssBytes: typeof process !== 'undefined' ? process.memoryUsage().rss : 0,
    heapUsedBytes: typeof process !== 'undefined' ? process.memoryUsage().heapUsed : 0,
  };
}
