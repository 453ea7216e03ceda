// The encoder's job queue (src/encoder/job-queue.ts): every job pushed is run, whenever it is pushed, in
// particular while the drain winds down after finding the queue empty, the window in which the engine hang of
// docs/testing.md ("Hangs and flaky failures") left an encode queued with no drain to run it. A push is made after every number of microtasks from 0 to 40
// past the end of a round's last job, with settle rounds of both kinds (a macrotask, and none at all).

import { describe, expect, it } from 'vitest';
import { JobQueue } from '../../src/encoder/job-queue';

const macrotask = () => new Promise((r) => setTimeout(r, 0));

for (const [label, settle] of [
  ['a macrotask before each round', macrotask],
  ['no wait before a round', () => Promise.resolve()],
] as const) {
  describe(`JobQueue, ${label}`, () => {
    it('runs a job pushed at any microtask of the drain winding down', async () => {
      for (let hops = 0; hops <= 40; hops++) {
        const ran: number[] = [];
        const queue = new JobQueue<number>(async (jobs) => {
          while (jobs.length > 0) {
            const job = jobs.shift()!;
            await Promise.resolve();
            ran.push(job);
            // The last job's completion reaches push() again after `hops` microtasks, as the encoder's
            // resolution reaches encodeBatch in-process.
            if (job === 1) {
              void (async () => {
                for (let i = 0; i < hops; i++) await null;
                queue.push(2);
              })();
            }
          }
        }, settle);
        queue.push(1);
        for (let i = 0; i < 4; i++) await macrotask();
        expect({ hops, ran, queued: queue.length, draining: queue.isDraining }).toEqual({ hops, ran: [1, 2], queued: 0, draining: false });
      }
    });

    it('jobs pushed in the same tick join one round; jobs pushed while it runs join the next', async () => {
      const rounds: number[][] = [];
      const queue = new JobQueue<number>(async (jobs) => {
        const round = jobs.splice(0);
        rounds.push(round);
        await macrotask();
        if (round.includes(1)) queue.push(3);
      }, settle);
      queue.push(1);
      queue.push(2);
      for (let i = 0; i < 6; i++) await macrotask();
      expect(rounds).toEqual([[1, 2], [3]]);
      expect(queue.isDraining).toBe(false);
    });
  });
}
