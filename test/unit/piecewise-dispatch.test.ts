// preparePiecewise: a step prepared whole and in pieces, with nothing left held when a piece fails; prepareAll: preparations started together.
import { describe, expect, it } from 'vitest';
import { leafDispatches, PiecewiseDispatch, prepareAll, preparePiecewise, type Dispatch } from '../../src/kernels/dispatch';

/** A dispatch that records what was encoded and whether it was released (no GPU). */
function recorder(label: string, log: string[], released: Set<string>): Dispatch {
  return {
    label,
    encode: () => void log.push(label),
    release: () => void released.add(label),
  };
}

describe('preparePiecewise', () => {
  it('keeps the whole and the pieces; the pieces are what a sequence encodes, and release frees both', async () => {
    const log: string[] = [];
    const released = new Set<string>();
    const d = await preparePiecewise(
      'step',
      async () => recorder('whole', log, released),
      [0, 1, 2].map((i) => async () => recorder(`piece${i}`, log, released)),
    );
    expect(d).toBeInstanceOf(PiecewiseDispatch);
    const p = d as PiecewiseDispatch;
    expect(p.whole.label).toBe('whole');
    expect(leafDispatches([p]).map((x) => x.label)).toEqual(['piece0', 'piece1', 'piece2']);
    p.encode({} as GPUComputePassEncoder);
    p.whole.encode({} as GPUComputePassEncoder);
    expect(log).toEqual(['piece0', 'piece1', 'piece2', 'whole']);
    p.release();
    expect([...released].sort()).toEqual(['piece0', 'piece1', 'piece2', 'whole']);
  });

  it('returns the whole alone when fewer than two pieces are asked for', async () => {
    const released = new Set<string>();
    for (const n of [0, 1]) {
      const d = await preparePiecewise(
        'step',
        async () => recorder('whole', [], released),
        Array.from({ length: n }, (_, i) => async () => recorder(`piece${i}`, [], released)),
      );
      expect(d).not.toBeInstanceOf(PiecewiseDispatch);
      expect(d.label).toBe('whole');
    }
    expect(released.size).toBe(0);
  });

  it('releases the whole and the pieces already prepared when a later piece fails', async () => {
    const released = new Set<string>();
    const pieces = [0, 1, 2].map((i) => async () => {
      if (i === 2) throw new Error('piece 2 failed');
      return recorder(`piece${i}`, [], released);
    });
    await expect(preparePiecewise('step', async () => recorder('whole', [], released), pieces)).rejects.toThrow('piece 2 failed');
    expect([...released].sort()).toEqual(['piece0', 'piece1', 'whole']);
  });
});

describe('prepareAll', () => {
  it('starts every preparation at once and keeps their order', async () => {
    const started: string[] = [];
    const released = new Set<string>();
    let open = 0;
    let most = 0;
    const make = (label: string, ms: number) =>
      (async () => {
        started.push(label);
        most = Math.max(most, ++open);
        await new Promise((r) => setTimeout(r, ms));
        open--;
        return recorder(label, [], released);
      })();
    const out = await prepareAll([make('a', 30), make('b', 10), make('c', 20)]);
    expect(out.map((d) => d.label)).toEqual(['a', 'b', 'c']);
    expect(most).toBe(3); // all three were in flight together
    expect(released.size).toBe(0);
  });

  it('releases what was prepared when one fails, after the others settle, and throws the failure', async () => {
    const released = new Set<string>();
    const slow = new Promise<Dispatch>((r) => setTimeout(() => r(recorder('slow', [], released)), 20));
    const err = await prepareAll([Promise.resolve(recorder('fast', [], released)), Promise.reject(new Error('no pipeline')), slow]).catch(
      (e: unknown) => e,
    );
    expect((err as Error).message).toBe('no pipeline');
    expect([...released].sort()).toEqual(['fast', 'slow']);
  });
});
