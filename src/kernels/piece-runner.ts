// Who decides when the next piece of a piecewise dispatch (dispatch.ts, PiecewiseDispatch) may run: the
// encoder's decode-priority gate (src/encoder/piece-gate.ts) implements it; the vision encoder takes one.

export interface PieceRunner {
  /** True while pieces must go one at a time (requests are decoding); false: submit freely. */
  readonly isPaced: boolean;
  /** Resolves when the next piece may start. */
  before(): Promise<void>;
  /** The piece just finished after `ms` (submit to GPU done). */
  after(ms: number): void;
}
