// The decode-priority gate (src/encoder/piece-gate.ts): pieces run freely, or only inside grants.

import { describe, expect, it } from 'vitest';
import { PieceGate } from '../../src/encoder/piece-gate';

/** An encode of `n` pieces of `ms` each through the gate; returns the order of events. */
function encode(gate: PieceGate, n: number, ms: number, log: string[]): Promise<void> {
  return gate.run(async () => {
    for (let i = 0; i < n; i++) {
      await gate.before();
      log.push(`piece ${i}`);
      gate.after(ms);
    }
  });
}

const tick = () => new Promise((r) => setTimeout(r, 0));

describe('PieceGate', () => {
  it('runs every piece at once when free', async () => {
    const gate = new PieceGate();
    const log: string[] = [];
    await encode(gate, 3, 10, log);
    expect(log).toEqual(['piece 0', 'piece 1', 'piece 2']);
  });

  it('paced: runs pieces only inside grants, and a grant reports the time spent', async () => {
    const gate = new PieceGate();
    gate.setPaced(true);
    const log: string[] = [];
    const done = encode(gate, 5, 10, log);
    await tick();
    expect(log).toEqual([]);
    expect(await gate.grant(25)).toBe(30); // 3 pieces: the third overran the budget
    expect(log).toEqual(['piece 0', 'piece 1', 'piece 2']);
    await tick();
    expect(log.length).toBe(3);
    expect(await gate.grant(100)).toBe(20); // the encode ended before the budget did
    await done;
    expect(log.length).toBe(5);
  });

  it('a grant with nothing to encode resolves at once with 0', async () => {
    const gate = new PieceGate();
    gate.setPaced(true);
    expect(await gate.grant(50)).toBe(0);
  });

  it('going free lets waiting pieces run', async () => {
    const gate = new PieceGate();
    gate.setPaced(true);
    const log: string[] = [];
    const done = encode(gate, 2, 10, log);
    await tick();
    expect(log).toEqual([]);
    gate.setPaced(false);
    await done;
    expect(log).toEqual(['piece 0', 'piece 1']);
  });
});
