// GET /metrics: Prometheus text, with vLLM's metric names where vLLM has one (so its dashboards read
// Tessera too) and tessera: names for the rest. Gauges and the engine's own counters are read from
// engine.stats() at each scrape; request counters and histograms are recorded as requests end. One
// registry per server (prom-client's default registry, a process global, is not used).

import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { TesseraInfo } from '../engine/types';
import type { Admission } from './admission';
import type { EngineHost } from './engine-host';

const TTFT_BUCKETS = [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80, 160, 640, 2560];
const ITL_BUCKETS = [0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80];
const E2E_BUCKETS = [0.3, 0.5, 0.8, 1, 1.5, 2, 2.5, 5, 10, 15, 20, 30, 40, 50, 60, 120, 240, 480, 960, 1920, 7680];

export class ServerMetrics {
  readonly registry = new Registry();
  private readonly promptTokens: Counter;
  private readonly generationTokens: Counter;
  private readonly success: Counter<'finished_reason'>;
  private readonly failures: Counter<'code'>;
  private readonly ttft: Histogram;
  private readonly itl: Histogram;
  private readonly e2e: Histogram;

  constructor(host: EngineHost, admission: Admission, modelName: string) {
    const registers = [this.registry];
    this.registry.setDefaultLabels({ model_name: modelName });
    const stats = () => host.engine?.stats();
    const gauge = (name: string, help: string, read: () => number | undefined) =>
      new Gauge({
        name,
        help,
        registers,
        collect() {
          this.set(read() ?? 0);
        },
      });
    /** A counter the engine keeps itself, copied at each scrape. */
    const engineCounter = (name: string, help: string, read: () => number | undefined) =>
      new Counter({
        name,
        help,
        registers,
        collect() {
          this.reset();
          this.inc(read() ?? 0);
        },
      });
    gauge('vllm:num_requests_running', 'Requests in the engine (prefilling or decoding).', () => stats()?.scheduler.numRunning);
    gauge(
      'vllm:num_requests_waiting',
      "Requests waiting: in the engine's scheduler queue and at the server's door.",
      () => (stats()?.scheduler.numWaiting ?? 0) + admission.numWaiting,
    );
    gauge('tessera:server_queue_length', 'Requests waiting at the server for a slot (--max-concurrency).', () => admission.numWaiting);
    gauge('tessera:server_requests_admitted', 'Requests holding a server slot.', () => admission.numRunning);
    gauge('vllm:kv_cache_usage_perc', 'KV-cache usage: blocks held by requests over all blocks (1 = full).', () => {
      const kv = stats()?.kv;
      return kv && kv.numBlocks > 0 ? (kv.numBlocks - kv.numFreeBlocks) / kv.numBlocks : 0;
    });
    gauge('tessera:kv_blocks_used', 'KV-cache blocks held by requests.', () => {
      const kv = stats()?.kv;
      return kv ? kv.numBlocks - kv.numFreeBlocks : 0;
    });
    gauge(
      'tessera:kv_blocks_free',
      'KV-cache blocks free (cached prefix blocks no request holds count as free).',
      () => stats()?.kv.numFreeBlocks,
    );
    gauge('tessera:kv_blocks_cached', 'Free KV-cache blocks that still hold a cached prefix.', () => stats()?.kv.numCachedBlocks);
    gauge('tessera:engine_ready', '1 when the engine takes requests, 0 while loading or recovering.', () =>
      host.state === 'ready' ? 1 : 0,
    );
    engineCounter(
      'vllm:prefix_cache_queries_total',
      'Prompt tokens looked up in the prefix cache.',
      () => stats()?.scheduler.prefixQueryTokens,
    );
    engineCounter('vllm:prefix_cache_hits_total', 'Prompt tokens found in the prefix cache.', () => stats()?.scheduler.prefixHitTokens);
    engineCounter('vllm:num_preemptions_total', 'Requests preempted to free KV blocks.', () => stats()?.scheduler.numPreemptions);
    const encoder = () => stats()?.encoder;
    engineCounter('vllm:mm_cache_queries_total', 'Media items looked up in the encoder cache.', () => {
      const e = encoder();
      return e ? e.memoryHits + e.inflightJoins + e.persistentHits + e.misses : 0;
    });
    engineCounter('vllm:mm_cache_hits_total', 'Media items the encoder cache answered (any tier).', () => {
      const e = encoder();
      return e ? e.memoryHits + e.inflightJoins + e.persistentHits : 0;
    });
    new Counter({
      name: 'tessera:encoder_cache_hits_total',
      help: "Media items the encoder cache answered, by tier: memory, inflight (joined another request's encode), persistent (IndexedDB or disk).",
      labelNames: ['tier'],
      registers,
      collect() {
        this.reset();
        const e = encoder();
        this.labels({ tier: 'memory' }).inc(e?.memoryHits ?? 0);
        this.labels({ tier: 'inflight' }).inc(e?.inflightJoins ?? 0);
        this.labels({ tier: 'persistent' }).inc(e?.persistentHits ?? 0);
      },
    });
    engineCounter('tessera:encoder_cache_misses_total', 'Media items the encoder had to encode.', () => encoder()?.misses);
    gauge(
      'tessera:encoder_cache_referenced_entries',
      'Encoder-cache entries held by running requests (0 once every request has ended).',
      () => encoder()?.referencedEntries,
    );
    gauge('tessera:gpu_memory_bytes', "Bytes of the engine's GPU buffers live (0 on the CPU backend).", () => stats()?.gpuMemory.bytesLive);
    new Gauge({
      name: 'tessera:gpu_memory_area_bytes',
      help: "Bytes of the engine's GPU buffers live, by area (weight, kv-cache, lm, vision, ...).",
      labelNames: ['area'],
      registers,
      collect() {
        this.reset();
        for (const [area, bytes] of Object.entries(stats()?.gpuMemory.byArea ?? {})) this.labels({ area }).set(bytes);
      },
    });
    const memory = () => (typeof process !== 'undefined' && typeof process.memoryUsage === 'function' ? process.memoryUsage() : undefined);
    gauge('process_resident_memory_bytes', "The server process's resident memory (RSS), in bytes.", () => memory()?.rss);
    // What RSS holds, split: the main thread's JavaScript heap in use, and the memory outside it that its
    // objects own (ArrayBuffers: features, images, read-back logits). Encoder worker threads count in RSS only.
    gauge('nodejs_heap_size_used_bytes', "The main thread's JavaScript heap in use, in bytes.", () => memory()?.heapUsed);
    gauge(
      'nodejs_external_memory_bytes',
      "Memory owned by the main thread's JavaScript objects outside its heap (ArrayBuffers), in bytes.",
      () => memory()?.external,
    );
    gauge('tessera:encoder_memory_cache_bytes', "Bytes of embeddings in the encoder's in-memory cache.", () => encoder()?.memoryBytes);
    this.promptTokens = new Counter({ name: 'vllm:prompt_tokens_total', help: 'Prompt tokens of finished requests.', registers });
    this.generationTokens = new Counter({
      name: 'vllm:generation_tokens_total',
      help: 'Generated tokens of finished requests.',
      registers,
    });
    this.success = new Counter({
      name: 'vllm:request_success_total',
      help: 'Requests that finished, by finish reason.',
      labelNames: ['finished_reason'],
      registers,
    });
    this.failures = new Counter({
      name: 'tessera:request_failures_total',
      help: 'Requests that failed or were cancelled, by error code.',
      labelNames: ['code'],
      registers,
    });
    this.ttft = new Histogram({ name: 'vllm:time_to_first_token_seconds', help: 'Time to first token.', buckets: TTFT_BUCKETS, registers });
    this.itl = new Histogram({
      name: 'vllm:inter_token_latency_seconds',
      help: 'Time between generated tokens.',
      buckets: ITL_BUCKETS,
      registers,
    });
    this.e2e = new Histogram({
      name: 'vllm:e2e_request_latency_seconds',
      help: 'Request time, arrival to last token.',
      buckets: E2E_BUCKETS,
      registers,
    });
  }

  /** One choice finished: its generated tokens, finish reason, time to first token and inter-token times. */
  choiceFinished(info: TesseraInfo, finishReason: string): void {
    this.generationTokens.inc(info.tokenIds.length);
    this.success.labels({ finished_reason: finishReason }).inc();
    this.ttft.observe(info.timings.ttftMs / 1000);
    for (const ms of info.timings.decodeStepMs) this.itl.observe(ms / 1000);
  }

  /** A request finished (every choice): its prompt tokens and its time from arrival to the last token. */
  requestFinished(promptTokens: number, e2eSeconds: number): void {
    this.promptTokens.inc(promptTokens);
    this.e2e.observe(e2eSeconds);
  }

  failed(code: string): void {
    this.failures.labels({ code }).inc();
  }

  text(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
