// Browser side of `npm run bench:serve` (driver: bench/serve/serve.ts). One scenario per page load, on
// the SmolVLM-256M-shaped bench model (random weights, one 512 tile per image), encoder in a worker:
//   throughput  aggregate decode tokens/s with 1, 4 and 16 requests at once
//   prefix      TTFT of a chat's second turn about the same image, with and without prefix caching
//   overlap     request A's inter-token latency alone and while request B's image encodes, and B's
//               encode time (decodePriority on or off: ?priority=on|off)
//   captions    N different images captioned at once (ours)
//   peer        the same N captions one after another with transformers.js (bench/serve/peer-captions.ts)

import { createEngine } from '../../src/engine/create-browser';
import type { Engine, EngineOptions } from '../../src/engine/engine';
import type { ChatCompletionRequest, TesseraInfo } from '../../src/engine/types';
import { runPeerCaptions } from './peer-captions';
import { captionImage, CAPTION_PROMPT, storyPrompt } from './serve-inputs';
import type { Idefics3Processor } from '../../src/processor/processor';

declare global {
  interface Window {
    __serveBenchResult?: unknown;
    __serveBenchError?: string;
  }
}

const params = new URLSearchParams(location.search);
const modelPath = `/${params.get('model')}/`;
const num = (name: string, fallback: number) => Number(params.get(name) ?? fallback);
const log = (line: string) => console.log(`[bench] ${line}`);

async function open(options: Partial<EngineOptions> = {}): Promise<Engine> {
  const t0 = performance.now();
  const engine = await createEngine({ model: modelPath, device: 'webgpu', encoder: { poolSize: 1 }, ...options });
  // Every scenario starts with an empty encoder cache: the persistent tier (IndexedDB) outlives the page,
  // and an image an earlier scenario encoded would otherwise be a cache hit here (no encode to measure).
  await engine.encoderCache.clear();
  log(`engine ready in ${(performance.now() - t0).toFixed(0)} ms (${JSON.stringify(options)})`);
  return engine;
}

function text(prompt: string, maxTokens: number): ChatCompletionRequest & { stream?: false } {
  return { messages: [{ role: 'user', content: [{ type: 'text', text: prompt }] }], max_tokens: maxTokens };
}

function withImage(image: Uint8Array, prompt: string, maxTokens: number): ChatCompletionRequest & { stream?: false } {
  return {
    messages: [
      {
        role: 'user',
        content: [
          { type: 'image', image },
          { type: 'text', text: prompt },
        ],
      },
    ],
    max_tokens: maxTokens,
  };
}

/** When the first token arrived (performance.now), from a response's timings. */
function firstTokenAt(info: TesseraInfo): number {
  const t = info.timings;
  return t.decodeStepEnd.length > 0 ? t.decodeStepEnd[0] - t.decodeStepMs[0] : Number.NaN;
}

async function throughput() {
  const engine = await open();
  const tokens = num('tokens', 32);
  await engine.chat.completions.create(text(storyPrompt(-1), 4)); // compile the decode pipelines
  const rows = [];
  for (const n of [1, 4, 16]) {
    // Warm the row buckets this batch size uses, so compilation is not timed.
    await Promise.all(Array.from({ length: n }, (_, i) => engine.chat.completions.create(text(storyPrompt(1000 + i), 3))));
    const t0 = performance.now();
    const out = await Promise.all(Array.from({ length: n }, (_, i) => engine.chat.completions.create(text(storyPrompt(i), tokens))));
    const wallMs = performance.now() - t0;
    const infos = out.map((r) => r.tessera);
    const decodeTokens = infos.reduce((a, i) => a + Math.max(0, i.tokenIds.length - 1), 0);
    const start = Math.min(...infos.map(firstTokenAt));
    const end = Math.max(...infos.map((i) => i.timings.decodeStepEnd.at(-1) ?? 0));
    // Steady state: from the moment every request decodes (the last first token: the others' prompts
    // were prefilled by then) to the end, the tokens decoded in that window. The whole window above also
    // holds the prefill steps of the requests that arrived a moment after the first.
    const steadyStart = Math.max(...infos.map(firstTokenAt));
    const steadyTokens = infos.reduce((a, i) => a + i.timings.decodeStepEnd.filter((t) => t > steadyStart).length, 0);
    const s = engine.stats();
    const row = {
      concurrent: n,
      decodeTokens,
      decodeWindowMs: end - start,
      aggregateDecodeTokensPerSecond: (decodeTokens * 1000) / (end - start),
      steadyDecodeTokens: steadyTokens,
      steadyWindowMs: end - steadyStart,
      steadyDecodeTokensPerSecond: (steadyTokens * 1000) / (end - steadyStart),
      wallMs,
      batchSeqsMax: s.scheduler.batchSeqs.max,
      perRequestDecodeTokensPerSecond: infos.map((i) => i.timings.decodeTokensPerSecond),
    };
    log(
      `throughput: ${n} at once -> ${row.aggregateDecodeTokensPerSecond.toFixed(2)} decode tok/s aggregate (${decodeTokens} tokens in ${(row.decodeWindowMs / 1000).toFixed(1)} s)`,
    );
    rows.push(row);
  }
  engine.destroy();
  return { rows, tokens };
}

async function prefix() {
  const image = await captionImage(0);
  const out: Record<string, unknown> = {};
  for (const caching of [true, false]) {
    const engine = await open({ prefixCaching: caching });
    const turn1 = withImage(image, 'What is in this picture?', 8);
    const a = await engine.chat.completions.create(turn1);
    const turn2: ChatCompletionRequest & { stream?: false } = {
      messages: [
        ...turn1.messages,
        { role: 'assistant', content: a.choices[0].message.content },
        { role: 'user', content: 'What colour is the largest shape?' },
      ],
      max_tokens: 1,
    };
    const b = await engine.chat.completions.create(turn2);
    const t = b.tessera.timings;
    log(
      `prefix caching ${caching ? 'on ' : 'off'}: turn 2 TTFT ${t.ttftMs.toFixed(0)} ms (prefill ${t.prefillMs.toFixed(0)} ms, ${b.tessera.cachedTokens} of ${b.tessera.promptTokens} prompt tokens from the cache)`,
    );
    out[caching ? 'on' : 'off'] = {
      turn1TtftMs: a.tessera.timings.ttftMs,
      turn2TtftMs: t.ttftMs,
      turn2PrefillMs: t.prefillMs,
      turn2PromptTokens: b.tessera.promptTokens,
      turn2CachedTokens: b.tessera.cachedTokens,
      imageSource: b.tessera.media[0]?.source,
    };
    if (caching) {
      // The cached turn against its floor, alternating (each one request; a step varies ~10% run to run):
      // more second turns about the same image (other questions, the same 80 cached tokens), each followed
      // by a text request of as many new tokens. The ratio is of the medians.
      const pairs: Array<{ cachedTtftMs: number; newTokens: number; floorTtftMs: number }> = [];
      const floor0 = await prefillFloor(engine, b.tessera.promptTokens - b.tessera.cachedTokens);
      pairs.push({ cachedTtftMs: t.ttftMs, newTokens: b.tessera.promptTokens - b.tessera.cachedTokens, floorTtftMs: floor0.ttftMs });
      for (const question of ['What colour is the smallest shape?', 'How many shapes are there?']) {
        const again = await engine.chat.completions.create({
          ...turn2,
          messages: [...turn2.messages.slice(0, -1), { role: 'user', content: question }],
        });
        const newTokens = again.tessera.promptTokens - again.tessera.cachedTokens;
        const f = await prefillFloor(engine, newTokens);
        pairs.push({ cachedTtftMs: again.tessera.timings.ttftMs, newTokens, floorTtftMs: f.ttftMs });
      }
      const med = (v: number[]) => [...v].sort((x, y) => x - y)[Math.floor(v.length / 2)];
      out.floor = {
        ...floor0,
        pairs,
        cachedTtftMedianMs: med(pairs.map((q) => q.cachedTtftMs)),
        floorTtftMedianMs: med(pairs.map((q) => q.floorTtftMs)),
      };
    }
    engine.destroy();
  }
  return out;
}

/**
 * The floor of a cached turn's TTFT: a text request of exactly `numTokens` prompt tokens, none of them
 * cached (a word no other prompt has), on the same engine: the time to prefill that many tokens alone,
 * with a text request's own fixed costs. Its prompt is grown word by word until the processor says it
 * has that many tokens.
 */
let floorNonce = 0;

async function prefillFloor(engine: Engine, numTokens: number) {
  // A word of its own first: no block of this prompt can be in the prefix cache (not even an earlier floor's).
  const nonce = `Zyxwv${++floorNonce}q`;
  const prompt = (words: number) => `${nonce} ${Array.from({ length: words }, (_, i) => `w${i}`).join(' ')}`;
  let words = 0;
  for (; words < 4 * numTokens; words++) {
    const plan = (
      await (engine.processor as Idefics3Processor).prepare([{ role: 'user', content: [{ type: 'text', text: prompt(words) }] }])
    ).plan;
    if (plan.tokenIds.length >= numTokens) break;
  }
  const r = await engine.chat.completions.create(text(prompt(words), 1));
  log(
    `prefill floor: a text request of ${r.tessera.promptTokens} prompt tokens (${r.tessera.cachedTokens} cached): TTFT ${r.tessera.timings.ttftMs.toFixed(0)} ms (prefill ${r.tessera.timings.prefillMs.toFixed(0)} ms)`,
  );
  return {
    promptTokens: r.tessera.promptTokens,
    cachedTokens: r.tessera.cachedTokens,
    ttftMs: r.tessera.timings.ttftMs,
    prefillMs: r.tessera.timings.prefillMs,
  };
}

async function overlap() {
  const on = params.get('priority') !== 'off';
  const engine = await open({ decodePriority: on ? { encoderShare: num('share', 0.25) } : false });
  await engine.chat.completions.create(withImage(await captionImage(900), CAPTION_PROMPT, 1)); // compile vision + decode
  const aTokens = num('aTokens', on ? 1200 : 400);
  const idleSteps = num('idleSteps', 40); // A's steps alone before B arrives
  // A alone first, the same request with nothing beside it: a decode step grows with A's context (its step
  // at position ~1000 is ~35% slower than at ~50 here), so each of A's steps while B encodes is compared
  // with this run's step at the same position. Greedy: both runs decode the same tokens.
  const solo = await engine.chat.completions.create(text(storyPrompt(7), aTokens));
  const soloSteps = solo.tessera.timings.decodeStepMs;
  const stepsBefore = engine.stats().scheduler.numSteps;
  const a = engine.chat.completions.create(text(storyPrompt(7), aTokens));
  // B arrives after A has decoded idleSteps tokens with nothing else running.
  while (engine.stats().scheduler.numSteps < stepsBefore + idleSteps + 1) await new Promise((r) => setTimeout(r, 50));
  const readyBefore = engine.stats().lifecycle.ready;
  const bSubmitted = performance.now();
  const b = engine.chat.completions.create(withImage(await captionImage(901), CAPTION_PROMPT, 4));
  // Wait for B's image to be ready (encoded). Bounded, so a missed event fails with the state instead of hanging.
  const waitLimitMs = num('waitMin', 30) * 60_000;
  while (engine.stats().lifecycle.ready === readyBefore) {
    if (performance.now() - bSubmitted > waitLimitMs) {
      throw new Error(
        `overlap: B's image was not ready ${waitLimitMs / 60_000} min after it was submitted; engine.stats() = ${JSON.stringify(engine.stats())}`,
      );
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  const bEncoded = performance.now();
  const [ra, rb] = await Promise.all([a, b]);
  if (rb.tessera.media[0]?.source !== 'encoded') {
    throw new Error(`overlap: B's image came from the ${rb.tessera.media[0]?.source} cache tier, so no encode overlapped A's decode`);
  }
  const ends = ra.tessera.timings.decodeStepEnd;
  const steps = ra.tessera.timings.decodeStepMs;
  const alone = steps.filter((_, i) => ends[i] < bSubmitted);
  const duringAt = steps.map((_, i) => i).filter((i) => ends[i] > bSubmitted && ends[i] <= bEncoded);
  const during = duringAt.map((i) => steps[i]);
  const soloAtSame = duringAt.filter((i) => i < soloSteps.length).map((i) => soloSteps[i]);
  // A's steps after B's encode: alone again, but at a longer context than the first ones (a control for
  // how much of the "during" growth is A's own context rather than B's encode).
  const after = steps.filter((_, i) => ends[i] > bEncoded);
  const s = engine.stats();
  engine.destroy();
  const r = {
    priority: on ? s.decodePriority.encoderShare : 'off',
    alone,
    during,
    after,
    soloAtSame,
    duringPositions: [duringAt[0] ?? 0, duringAt.at(-1) ?? 0],
    bEncodeMs: rb.tessera.timings.encodeMs,
    bWindowMs: bEncoded - bSubmitted,
    aTokens: ra.tessera.tokenIds.length,
    grantedMs: s.decodePriority.grantedMs,
    chargedMs: s.decodePriority.chargedMs,
  };
  log(
    `overlap (${on ? 'decode priority' : 'free encoder'}): ${alone.length} steps alone, ${during.length} during B's encode (${(r.bEncodeMs / 1000).toFixed(1)} s)`,
  );
  return r;
}

async function captions() {
  const n = num('n', 16);
  const maxTokens = num('tokens', 16);
  const engine = await open();
  await engine.chat.completions.create(withImage(await captionImage(900), CAPTION_PROMPT, 2)); // compile
  const images = await Promise.all(Array.from({ length: n }, (_, i) => captionImage(i)));
  const t0 = performance.now();
  const out = await Promise.all(images.map((im) => engine.chat.completions.create(withImage(im, CAPTION_PROMPT, maxTokens))));
  const wallMs = performance.now() - t0;
  const s = engine.stats();
  engine.destroy();
  log(`captions: ${n} images at once in ${(wallMs / 1000).toFixed(1)} s`);
  return {
    n,
    maxTokens,
    wallMs,
    tokens: out.map((r) => r.tessera.tokenIds.length),
    encodes: s.encoder.encodes,
    batchedEncodes: s.encoder.batchedEncodes,
    encodeMsP50: s.encoder.encodeMs.p50,
    batchSeqsMax: s.scheduler.batchSeqs.max,
  };
}

async function main(): Promise<unknown> {
  switch (params.get('scenario')) {
    case 'throughput':
      return throughput();
    case 'prefix':
      return prefix();
    case 'overlap':
      return overlap();
    case 'captions':
      return captions();
    case 'peer':
      return runPeerCaptions({ modelId: params.get('model')!, n: num('n', 16), maxTokens: num('tokens', 16), log });
    default:
      throw new Error(`unknown scenario ${params.get('scenario')}`);
  }
}

main().then(
  (r) => (window.__serveBenchResult = r),
  (e: unknown) => {
    console.error(e);
    window.__serveBenchError = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
  },
);
