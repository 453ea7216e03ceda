// Decode priority: while requests are decoding, the encoder's GPU work runs only between model steps,
// for a share of each step's time (DESIGN invariant 5, issue 7 item 6). With share s, a decode step that
// took d ms is followed by about s·d ms of encoder pieces, so inter-token latency stays near (1 + s)·d
// while an image encodes, and the encode goes at about s / (1 + s) of its unpaced speed. A piece can
// overrun its grant; the overrun is taken from the next grants (credit), so the average holds.
//
// Off (share undefined), the encoder works freely beside decoding: faster encodes, slower decode steps
// while they run (on a CPU-emulated adapter both share the same cores).

import type { MediaEncoder } from '../encoder/media-encoder';

export interface DecodePriority {
  /** Encoder time per unit of decode step time while requests decode (default 0.25). */
  encoderShare: number;
}

export const DEFAULT_DECODE_PRIORITY: DecodePriority = { encoderShare: 0.25 };

export class EncoderPacing {
  private creditMs = 0;
  /** Encoder time granted between steps (stats). */
  grantedMs = 0;

  constructor(
    private readonly media: MediaEncoder,
    readonly policy: DecodePriority | undefined,
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
    if (!encoding) {
      this.creditMs = 0;
      return;
    }
    this.creditMs = Math.min(this.creditMs + this.policy.encoderShare * stepMs, this.policy.encoderShare * stepMs * 4);
    if (this.creditMs <= 0) return;
    const spent = await this.media.grant(this.creditMs);
    this.grantedMs += spent;
    this.creditMs -= spent;
  }

  /** Nothing decodes (or the loop sleeps waiting for encodes): the encoder runs freely. */
  idle(): void {
    this.creditMs = 0;
    this.media.setPaced(false);
  }
}
