// One load level of bench:http: `concurrency` streamed requests started together (in rounds until 8 have
// run), each timed from its start: time to its first text, the gaps between text chunks, and its generated
// tokens (from the usage chunk). The same code drives the in-process engine and the openai client, so both are measured alike.

/** What a streamed answer yields, as both the engine and the openai client stream it. */
export interface StreamChunk {
  choices: Array<{ delta: { content?: string | null } }>;
  usage?: { completion_tokens: number } | null;
}

export interface LoadFigures {
  concurrency: number;
  requests: number;
  completionTokens: number;
  wallMs: number;
  /** Generated tokens of all requests over the wall time, start of the first to end of the last. */
  tokensPerSecond: number;
  ttftMs: { p50: number; p95: number };
  interTokenMs: { p50: number; p95: number };
}

export function percentile(values: readonly number[], q: number): number {
  if (values.length === 0) return 0;
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
}

/** The prompt of request `i` at level `concurrency`: distinct from its first token, so no prefix is shared. */
export function loadPrompt(concurrency: number, i: number): string {
  return `${concurrency * 1000 + i}: write a short story about a lighthouse keeper and a storm.`;
}

/** Requests per level at least: a level of fewer runs in rounds, so its percentiles have samples. */
export const MIN_REQUESTS_PER_LEVEL = 8;

/**
 * `concurrency` requests at once, in rounds until MIN_REQUESTS_PER_LEVEL have run (request i of round r
 * is number r * concurrency + i); tokens/s over the rounds' summed wall time.
 */
export async function runLoad(concurrency: number, stream: (i: number) => Promise<AsyncIterable<StreamChunk>>): Promise<LoadFigures> {
  const ttft: number[] = [];
  const gaps: number[] = [];
  let tokens = 0;
  let wallMs = 0;
  const rounds = Math.ceil(MIN_REQUESTS_PER_LEVEL / concurrency);
  for (let r = 0; r < rounds; r++) {
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: concurrency }, async (_, j) => {
        const start = performance.now();
        let last: number | undefined;
        for await (const chunk of await stream(r * concurrency + j)) {
          if (chunk.usage) tokens += chunk.usage.completion_tokens;
          if (!chunk.choices[0]?.delta.content) continue;
          const now = performance.now();
          if (last === undefined) ttft.push(now - start);
          else gaps.push(now - last);
          last = now;
        }
      }),
    );
    wallMs += performance.now() - t0;
  }
  return {
    concurrency,
    requests: concurrency * rounds,
    completionTokens: tokens,
    wallMs,
    tokensPerSecond: tokens / (wallMs / 1000),
    ttftMs: { p50: percentile(ttft, 0.5), p95: percentile(ttft, 0.95) },
    interTokenMs: { p50: percentile(gaps, 0.5), p95: percentile(gaps, 0.95) },
  };
}
