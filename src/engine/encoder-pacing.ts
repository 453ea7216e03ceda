// Decode priority: while requests are decoding, the encoder's GPU work runs only between model steps,
// for a share of each step's time (docs/design.md invariant 5). With share s, a decode step that
// takes d ms alone is followed by about s·d ms of encoder pieces, so inter-token latency stays near
// (1 + s)·d while an image encodes, and the encode goes at about s / (1 + s) of its unpaced speed.
//
// What a grant costs decoding is measured where decoding sees it, not where the encoder does: the wall
// time from granting to the grant's end on this thread (the encoder's own piece times plus messaging and
// scheduling between the two), and how much slower the next step runs than a step after no grant (on a
// CPU-emulated adapter the two devices share caches and threads). That cost is taken from a credit that
// grows by s·d per step; a piece cannot be interrupted, so an overrun leaves a debt, and the steps that
// pay it off run with no encoder work at all. The average holds: decode gets (1 + s)·d per token.
//
// Off (share undefined), the encoder works freely beside decoding: faster encodes, slower decode steps
// while they run (on a CPU-emulated adapter both share the same cores).
//
// The flow, every file it crosses (an encoder worker adds the two middle hops; in-process skips them):
//
//   engine/serve-loop.ts          beforeStep(decoding) -> step -> afterStep(stepMs, decoding, encoding)
//     engine/encoder-pacing.ts    credit += s·d; grant(credit) ............ spent -> credit -= cost
//       encoder/media-encoder.ts  setPaced / grant to the backend               ^
//         encoder/worker-pool.ts  each live worker (protocol/encoder.ts)         | the most any took
//           encoder/expose.ts     the worker side of those two calls             |
//             encoder/encoder-core.ts -> encoder/piece-gate.ts: pieces wait for a grant, run while it
//                                    has budget, and the last one resolves it with the time spent
//               model/vision-encoder.ts  a tile's dispatches cut into pieces (kernels/piece-runner.ts);
//               model/qwen-vision-encoder.ts a Qwen-VL grid's, cut when its pass starts paced
//
// Settings: engine/engine.ts (EngineOptions.decodePriority); figures: engine/engine-stats.ts
// (stats().decodePriority: grantedMs, chargedMs).

export interface DecodePriority {
  /** Encoder time per unit of decode step time while requests decode (default 0.2). */
  encoderShare: number;
}

/**
 * 0.15: on SwiftShader (bench:serve overlap, SmolVLM-256M shape, a 512 tile encoding beside a decode of 700
 * tokens) a step while the image encodes took 1.17x / 1.23x a step alone at p50 / p95 with 0.15 (another
 * run: 1.16x / 1.20x, the encode 159.3 s), against
 * 1.25x / 1.27x with 0.2 in the same run (another run: 1.22x / 1.25x) and 1.32x / 1.43x with 0.25 (the p95
 * is a step followed by an encoder piece longer than its grant). The encode took 157.6 s beside the decode
 * with 0.15 and 157.0 s with 0.2 (0.25: 150 s; alone: ~34 s): below 0.25 the encoder's pace is set by the
 * pieces that fit between steps more than by the share.
 */
export const DEFAULT_DECODE_PRIORITY: DecodePriority = { encoderShare: 0.15 };

/** What pacing needs of the media encoder. */
export interface PacedEncoder {
  setPaced(paced: boolean): void;
  /** Let the encoder run for about budgetMs; resolves with the time its pieces took (0: nothing to run). */
  grant(budgetMs: number): Promise<number>;
}

/** Weight of the newest step in the running estimate of a step's time with no encoder work before it. */
const BASELINE_WEIGHT = 0.25;

export class EncoderPacing {
  private creditMs = 0;
  /** Decode step time (ms) with no grant before it: a running estimate, undefined until one is seen. */
  private baselineMs: number | undefined;
  /** Whether the encoder ran between the previous step and this one. */
  private grantedBefore = false;
  /** Encoder time granted between steps, as the encoder timed its pieces (stats). */
  grantedMs = 0;
  /** What those grants cost decoding: their wall time here plus the slow-down of the steps after them (stats). */
  chargedMs = 0;

  constructor(
    private readonly media: PacedEncoder,
    readonly policy: DecodePriority | undefined,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Before a step's encodes start: pace them if the step decodes (so they wait for grants from the start). */
  beforeStep(decoding: boolean): void {
    if (this.policy && decoding) this.media.setPaced(true);
  }

  /** After a model step of `stepMs`: if requests still decode, let the encoder run its share now. */
  async afterStep(stepMs: number, decoding: boolean, encoding: boolean): Promise<void> {
    if (!this.policy || !decoding) {
      this.idle();
      return;
    }
    this.media.setPaced(true);
    if (this.grantedBefore) {
      const slowdown = this.baselineMs === undefined ? 0 : Math.max(0, stepMs - this.baselineMs);
      this.creditMs -= slowdown;
      this.chargedMs += slowdown;
    } else {
      this.baselineMs = this.baselineMs === undefined ? stepMs : this.baselineMs + BASELINE_WEIGHT * (stepMs - this.baselineMs);
    }
    this.grantedBefore = false;
    if (!encoding) {
      this.creditMs = 0;
      return;
    }
    const share = this.policy.encoderShare * (this.baselineMs ?? stepMs);
    this.creditMs = Math.min(this.creditMs + share, share * 4);
    if (this.creditMs <= 0) return;
    const t0 = this.now();
    const spent = await this.media.grant(this.creditMs);
    if (spent <= 0) return;
    const cost = Math.max(spent, this.now() - t0);
    this.grantedMs += spent;
    this.chargedMs += cost;
    this.creditMs -= cost;
    this.grantedBefore = true;
  }

  /** Nothing decodes (or the loop sleeps waiting for encodes): the encoder runs freely. */
  idle(): void {
    this.creditMs = 0;
    this.grantedBefore = false;
    this.media.setPaced(false);
  }
}
