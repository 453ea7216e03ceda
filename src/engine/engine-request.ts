// One chat request inside the engine: its options, prompt plan and media, its scheduler twin, the
// streaming detokenizer and stop strings, the text deltas waiting for the caller, and its timings.
//
//   caller ◄── deltas (queue) ◄── onToken(id): detokenize, stop strings ◄── serve loop (every step that samples it)
//   caller ◄── result / error  ◄── finish(cause) / fail(error)

import { InternalError } from '../errors';
import type { SamplingParams } from '../model/runner/model-runner';
import type { StreamingDetokenizer } from '../processor/detokenizer';
import type { RequestMessage } from './intake/given-embeddings';
import type { PromptPlan } from '../processor/prompt';
import type { FinishCause, SchedRequest } from '../scheduler/request';
import type { RequestMedia } from './intake/request-media';
import type { CheckedRequest } from './intake/validate-request';
import { StopStrings } from './stop-strings';
import { audioInfo } from './intake/intake-audio';
import { videoInfo, type RequestVideo } from './intake/intake-video';
import type { PreparedAudio } from '../protocol/encoder';
import type { ChatCompletionRequest, FinishReason, RequestTimings, TesseraInfo, TokenLogprob } from './types';
import type { TokenLogprobIds } from './logprobs';
import { maskWords, penaltyAmounts, type LogitAdjust } from '../kernels/logit-adjust-reference';

export interface RunResult {
  finishReason: FinishReason;
  info: TesseraInfo;
  text: string;
  /** With logprobs: true, every token's (stop tokens aside). */
  logprobs?: TokenLogprob[];
}

/** Text as it streams, with the log probabilities of the tokens it completes (logprobs: true). */
export interface Delta {
  text: string;
  logprobs?: TokenLogprob[];
}

/**
 * What constrains a request's tokens (a grammar for response_format): the mask of the tokens that may
 * come next, told each token that came.
 */
export interface TokenConstraint {
  /** Write the next token's bitmask (bit j of word i: token 32 i + j may come). */
  fillMask(out: Int32Array): void;
  accept(id: number): void;
  dispose(): void;
}

/** A token's text and bytes, for log probabilities. */
export type TokenNamer = (id: number) => { token: string; bytes: number[] | null };

type Item = { kind: 'delta'; delta: Delta } | { kind: 'done'; result: RunResult } | { kind: 'error'; error: unknown };

/** Sampling parameters of a request without the per-token step (undefined: greedy). */
export class EngineRequest {
  readonly t0 = performance.now();
  readonly maxTokens: number;
  readonly sampling: Omit<SamplingParams, 'step'> | undefined;
  readonly includeUsage: boolean;
  readonly penalties: CheckedRequest['penalties'];
  /** With logprobs: true, the alternatives per token (0 to 20). */
  readonly logprobs: number | undefined;
  readonly responseFormat: CheckedRequest['responseFormat'];
  /** The tools offered and tool_choice (undefined: none). */
  readonly tools: CheckedRequest['tools'];
  /** The grammar of response_format, set once it compiled (disposed when the request settles). */
  constraint: TokenConstraint | undefined;
  /** Times each token was sampled so far (kept only for requests with penalties). */
  private readonly counts = new Map<number, number>();
  private readonly pendingLogprobs: TokenLogprob[] = [];
  private readonly allLogprobs: TokenLogprob[] = [];
  private mask: Int32Array | undefined;
  private readonly stops: StopStrings;
  /** The answer's text so far (what was emitted). */
  private text = '';
  plan: PromptPlan | undefined;
  media: RequestMedia[] = [];
  videos: RequestVideo[] = [];
  audios: PreparedAudio[] = [];
  sched: SchedRequest | undefined;
  degraded: 'text-only' | undefined;
  /** A reduced-resolution retry happened (at most one). */
  retried = false;
  readonly tokenIds: number[] = [];
  readonly timings = {
    processMs: 0,
    encodeStart: 0,
    encodeEnd: 0,
    prefillStart: 0,
    firstToken: 0,
    numPrefillChunks: 0,
    /** performance.now() at each token after the first (decode steps). */
    tokenAt: [] as number[],
  };
  /** Lifecycle marks per media item. */
  readonly staged = new Set<RequestMedia>();
  readonly spliced = new Set<RequestMedia>();
  readonly prefilled = new Set<RequestMedia>();
  /** Its media references were given back (once). */
  released = false;
  private readonly items: Item[] = [];
  private notify: (() => void) | undefined;
  private settled = false;

  constructor(
    readonly id: number,
    readonly request: ChatCompletionRequest,
    checked: CheckedRequest,
    readonly messages: RequestMessage[],
    readonly stopIds: ReadonlySet<number>,
    private readonly detok: StreamingDetokenizer,
    private readonly nameToken?: TokenNamer,
  ) {
    this.maxTokens = checked.maxTokens;
    this.sampling = checked.sampling;
    this.includeUsage = checked.includeUsage;
    this.penalties = checked.penalties;
    this.logprobs = checked.logprobs;
    this.responseFormat = checked.responseFormat;
    this.tools = checked.tools;
    this.stops = new StopStrings(checked.stop);
  }

  /** A stop string appeared: the serve loop ends the request (finish_reason 'stop'). */
  get stoppedByString(): boolean {
    return this.stops.stopped;
  }

  get isSettled(): boolean {
    return this.settled;
  }

  /**
   * The processors for this request's next token (penalties, the grammar's mask) over a vocabulary of
   * `vocab`; undefined when it has none.
   */
  logitAdjust(vocab: number): LogitAdjust | undefined {
    const penalties = this.penalties ? penaltyAmounts(this.counts, this.penalties.frequency, this.penalties.presence) : undefined;
    let allowed: Int32Array | undefined;
    if (this.constraint) {
      if (this.mask?.length !== maskWords(vocab)) this.mask = new Int32Array(maskWords(vocab));
      this.constraint.fillMask(this.mask);
      allowed = this.mask;
    }
    return penalties || allowed ? { ...(penalties ? { penalties } : {}), ...(allowed ? { allowed } : {}) } : undefined;
  }

  /**
   * A token sampled for this request (stop tokens included: they end it without text), with its log
   * probabilities when the request asked for them.
   */
  onToken(id: number, stop: boolean, logprob?: TokenLogprobIds): void {
    const now = performance.now();
    if (this.tokenIds.length === 0) this.timings.firstToken = now;
    else this.timings.tokenAt.push(now);
    this.tokenIds.push(id);
    if (this.penalties) this.counts.set(id, (this.counts.get(id) ?? 0) + 1);
    this.constraint?.accept(id);
    if (stop || this.stops.stopped) return;
    if (logprob && this.nameToken) {
      const entry: TokenLogprob = {
        ...this.nameToken(id),
        logprob: logprob.logprob,
        top_logprobs: logprob.top.map((t) => ({ ...this.nameToken!(t.id), logprob: t.logprob })),
      };
      this.pendingLogprobs.push(entry);
      this.allLogprobs.push(entry);
    }
    this.emit(this.stops.push(this.detok.push(id)));
  }

  private emit(text: string): void {
    if (!text) return;
    this.text += text;
    this.put({ kind: 'delta', delta: { text, ...this.takeLogprobs() } });
  }

  private takeLogprobs(): { logprobs?: TokenLogprob[] } {
    if (this.logprobs === undefined) return {};
    return { logprobs: this.pendingLogprobs.splice(0) };
  }

  private byStart: { list: readonly RequestMedia[]; map: Map<number, RequestMedia> } | undefined;

  /**
   * The media item whose placeholder starts at `start`: a request's media are told apart by where their
   * placeholder starts (the scheduler's SchedMediaItem.start), never by their order in a list.
   */
  mediaAt(start: number): RequestMedia {
    // Looked up for each media item on every step (decode steps too): a map, rebuilt when a new plan
    // replaces the list (a retry), instead of a scan of the list per item.
    if (this.byStart?.list !== this.media) {
      this.byStart = { list: this.media, map: new Map(this.media.map((x) => [x.placeholder.runs[0].offset, x])) };
    }
    const m = this.byStart.map.get(start);
    if (!m) throw new InternalError(`request ${this.id} has no media item whose placeholder starts at token ${start}`);
    return m;
  }

  /** The request ended normally (stop token, max_tokens or the context window). */
  finish(cause: FinishCause, media: TesseraInfo['media']): RunResult {
    if (!this.stops.stopped) this.emit(this.stops.push(this.detok.flush()));
    this.emit(this.stops.flush());
    // Tokens whose text never came (held back by a stop string, or an unfinished character): their
    // log probabilities still go out, with no text.
    if (this.pendingLogprobs.length > 0) this.put({ kind: 'delta', delta: { text: '', ...this.takeLogprobs() } });
    const stopped = cause === 'stop' || this.stops.stopped;
    const result: RunResult = {
      finishReason: stopped ? 'stop' : 'length',
      info: this.info(media),
      text: this.text,
      ...(this.logprobs !== undefined ? { logprobs: this.allLogprobs } : {}),
    };
    this.put({ kind: 'done', result });
    this.settle();
    return result;
  }

  fail(error: unknown): void {
    if (this.settled) return;
    this.put({ kind: 'error', error });
    this.settle();
  }

  private settle(): void {
    this.settled = true;
    this.constraint?.dispose();
    this.constraint = undefined;
  }

  /** Text deltas as they come, then the result (or the error). */
  async *deltas(): AsyncGenerator<Delta, RunResult> {
    for (;;) {
      while (this.items.length === 0) await new Promise<void>((r) => (this.notify = r));
      const item = this.items.shift()!;
      if (item.kind === 'delta') yield item.delta;
      else if (item.kind === 'done') return item.result;
      else throw item.error;
    }
  }

  timingsSoFar(): RequestTimings {
    const t = this.timings;
    const steps = t.tokenAt.map((at, i) => at - (i === 0 ? t.firstToken : t.tokenAt[i - 1]));
    const decodeMs = steps.reduce((a, b) => a + b, 0);
    return {
      processMs: t.processMs,
      encodeMs: t.encodeEnd > t.encodeStart ? t.encodeEnd - t.encodeStart : 0,
      prefillMs: t.firstToken > 0 && t.prefillStart > 0 ? t.firstToken - t.prefillStart : 0,
      ttftMs: t.firstToken > 0 ? t.firstToken - this.t0 : 0,
      decodeMs,
      decodeTokensPerSecond: decodeMs > 0 ? (steps.length * 1000) / decodeMs : 0,
      numPrefillChunks: t.numPrefillChunks,
      decodeStepMs: steps,
      decodeStepEnd: [...t.tokenAt],
    };
  }

  private info(media: TesseraInfo['media']): TesseraInfo {
    const plan = this.plan;
    if (!plan) throw new InternalError(`request ${this.id} finished without a prompt plan`);
    return {
      tokenIds: [...this.tokenIds],
      promptTokens: plan.tokenIds.length,
      imageTokens: plan.placeholders.reduce((a, p) => a + p.length, 0),
      numTiles: plan.placeholders.reduce((a, p) => a + p.numTiles, 0),
      cachedTokens: this.sched?.numCachedTokens ?? 0,
      timings: this.timingsSoFar(),
      media,
      videos: videoInfo(this.videos),
      audios: audioInfo(this.audios, this.media),
      ...(this.degraded ? { degraded: this.degraded } : {}),
    };
  }

  private put(item: Item): void {
    this.items.push(item);
    const n = this.notify;
    this.notify = undefined;
    n?.();
  }
}
