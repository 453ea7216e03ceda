// When the encoder may run the next piece of its GPU work (decode priority, docs/design.md invariant 5).
//
//   free   (default; nothing is decoding): every piece runs at once.
//   paced  (requests are decoding): pieces run only inside grants. The serve loop grants a time budget
//          between two model steps and waits for it to be spent, so encoder work never overlaps a step:
//
//   main:     [ step ][grant 60 ms]........[ step ][grant 60 ms]........
//   encoder:          [piece][piece]               [piece][piece]
//
// A piece cannot be interrupted: the last one of a grant may overrun it, and grant() reports the time
// really spent so the caller can carry the overrun into the next grant.

import type { PieceRunner } from '../kernels/piece-runner';

interface Grant {
  budgetMs: number;
  spentMs: number;
  done(spentMs: number): void;
}

export class PieceGate implements PieceRunner {
  private paced = false;
  private grant_: Grant | undefined;
  private waiting: Array<() => void> = [];
  /** Pieces are running or waiting to run (an encode is in progress). */
  private active = 0;

  get isPaced(): boolean {
    return this.paced;
  }

  /** The gate now, for a stall report: whether pieces wait for a grant, and the grant open if any. */
  state(): { paced: boolean; activeEncodes: number; piecesWaiting: number; grant?: { budgetMs: number; spentMs: number } } {
    const g = this.grant_;
    return {
      paced: this.paced,
      activeEncodes: this.active,
      piecesWaiting: this.waiting.length,
      ...(g ? { grant: { budgetMs: Math.round(g.budgetMs), spentMs: Math.round(g.spentMs) } } : {}),
    };
  }

  setPaced(paced: boolean): void {
    this.paced = paced;
    if (!paced) {
      this.endGrant();
      this.wakeAll();
    }
  }

  /** Let pieces run for about `budgetMs`; resolves with the time they took (0 when nothing is encoding). */
  grant(budgetMs: number): Promise<number> {
    this.endGrant();
    if (this.active === 0 || budgetMs <= 0) return Promise.resolve(0);
    return new Promise<number>((resolve) => {
      this.grant_ = { budgetMs, spentMs: 0, done: resolve };
      this.wakeAll();
    });
  }

  /** Run `work` as one encode: while it runs, pieces go through this gate. */
  async run<T>(work: () => Promise<T>): Promise<T> {
    this.active++;
    try {
      return await work();
    } finally {
      if (--this.active === 0) this.endGrant();
    }
  }

  before(): Promise<void> {
    if (!this.paced || (this.grant_ && this.grant_.spentMs < this.grant_.budgetMs)) return Promise.resolve();
    return new Promise<void>((r) => this.waiting.push(r));
  }

  after(ms: number): void {
    const g = this.grant_;
    if (!g) return;
    g.spentMs += ms;
    if (g.spentMs >= g.budgetMs) this.endGrant();
  }

  private endGrant(): void {
    const g = this.grant_;
    this.grant_ = undefined;
    g?.done(g.spentMs);
  }

  private wakeAll(): void {
    const w = this.waiting;
    this.waiting = [];
    for (const r of w) r();
  }
}
