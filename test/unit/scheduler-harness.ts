// A fake model runner for the integer scheduler tests (vLLM tests/v1/core style): it "writes KV" by
// recording, for every slot a step computes, which token at which position of which media item it holds,
// and before sampling it reads a sequence's whole context back through its block table and checks every
// slot holds exactly what that sequence would have written there. So a wrong block table, a prefix hit
// across different images, or a reused block that was overwritten fails the test, not only a wrong count.
// Its "logits" are a hash of the whole token history: the same history always samples the same token.

import { BlockPool } from '../../src/kv/block-pool';
import { createBlockHasher, type BlockHasher } from '../../src/kv/block-hash';
import { KvManager } from '../../src/kv/kv-manager';
import type { SchedRequest } from '../../src/scheduler/request';
import { Scheduler, type SchedulerConfig, type SchedulerStep, type StepUpdate } from '../../src/scheduler/scheduler';

export interface Harness {
  scheduler: Scheduler;
  kv: KvManager;
  pool: BlockPool;
  model: FakeModel;
  /** schedule -> fake run -> update; settles the step's encodes at once unless told otherwise. */
  step(options?: { settleEncodes?: boolean }): { plan: SchedulerStep; update: StepUpdate };
}

export async function harness(config: Partial<SchedulerConfig> & { numBlocks: number; blockSize: number }): Promise<Harness> {
  const hasher: BlockHasher = await createBlockHasher();
  const pool = new BlockPool(config.numBlocks, config.blockSize);
  const kv = new KvManager(pool);
  const scheduler = new Scheduler(
    {
      maxTokensPerStep: config.maxTokensPerStep ?? 64,
      encoderBudget: config.encoderBudget ?? 1000,
      maxRunning: config.maxRunning ?? 8,
      contextWindow: config.contextWindow ?? 100_000,
      contextLimits: config.contextLimits,
    },
    kv,
    hasher,
  );
  const model = new FakeModel(kv);
  return {
    scheduler,
    kv,
    pool,
    model,
    step(options = {}) {
      const plan = scheduler.schedule();
      if (options.settleEncodes ?? true) for (const e of plan.encode) scheduler.encodeSettled(e.req, e.item, true);
      const sampled = model.run(plan);
      return { plan, update: scheduler.update(plan, sampled) };
    },
  };
}

/** What a slot holds: token id, position, and the media key covering that position (if any). */
function content(req: SchedRequest, pos: number): string {
  const m = req.media.find((x) => pos >= x.start && pos < x.end);
  return `${req.tokenAt(pos)}@${pos}${m ? `#${m.key}` : ''}`;
}

export class FakeModel {
  readonly slots = new Map<number, string>();
  numRows = 0;

  constructor(private readonly kv: KvManager) {}

  run(plan: SchedulerStep): Map<number, number> {
    const out = new Map<number, number>();
    for (const s of plan.seqs) {
      const req = s.req;
      for (const m of req.media) {
        if (m.state !== 'ready' && m.start < s.start + s.numTokens && m.end > s.start) {
          throw new Error(
            `request ${req.id}: step covers [${s.start}, ${s.start + s.numTokens}) but media [${m.start}, ${m.end}) is ${m.state}`,
          );
        }
      }
      const slots = this.kv.slots(req.id, s.start, s.numTokens);
      slots.forEach((slot, i) => {
        this.slots.set(slot, content(req, s.start + i));
      });
      this.numRows += s.numTokens;
      if (!s.sample) continue;
      const end = s.start + s.numTokens;
      const all = this.kv.slots(req.id, 0, end);
      for (let p = 0; p < end; p++) {
        const got = this.slots.get(all[p]);
        if (got !== content(req, p))
          throw new Error(`request ${req.id}: position ${p} reads '${got}' from slot ${all[p]}, expected '${content(req, p)}'`);
      }
      out.set(req.id, nextToken(req.tokens(0, end)));
    }
    return out;
  }
}

/** The fake logits' argmax: a hash of the whole history, in [10, 1010). */
export function nextToken(history: Uint32Array): number {
  let h = 2166136261;
  for (const t of history) h = Math.imul(h ^ t, 16777619) >>> 0;
  return 10 + (h % 1000);
}

/** Tokens a request produces alone: the fake model's greedy continuation of its prompt. */
export function soloTokens(prompt: Uint32Array, maxTokens: number, stopIds: ReadonlySet<number> = new Set()): number[] {
  const out: number[] = [];
  const hist = [...prompt];
  while (out.length < maxTokens) {
    const t = nextToken(Uint32Array.from(hist));
    out.push(t);
    hist.push(t);
    if (stopIds.has(t)) break;
  }
  return out;
}

export function prompt(n: number, seed: number): Uint32Array {
  return Uint32Array.from({ length: n }, (_, i) => 1000 + ((i * 7 + seed * 131) % 500));
}

/** Run steps until every request finished (or `maxSteps`); returns the steps taken. */
export function drain(h: Harness, maxSteps = 10_000): number {
  let n = 0;
  while (h.scheduler.hasWork()) {
    if (++n > maxSteps) throw new Error(`not done after ${maxSteps} steps`);
    h.step();
  }
  return n;
}
