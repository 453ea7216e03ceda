// response_format on the engine (the CPU backend here; test/gpu/engine.test.ts on WebGPU, and
// test/e2e/response-format.spec.ts in Chromium): JSON mode and two JSON schemas on the tiny random-weight
// checkpoint, greedy and sampled, alone and 8 at once, streamed and with n = 3: every answer parses and
// validates. A schema that cannot be enforced is refused by name before any work; a schema asked twice
// compiles once; a broken request never breaks the ones beside it.

import { describe, expect, it } from 'vitest';
import type { ChatCompletionChunk } from '../../src/engine/types';
import { InvalidRequestError, UnsupportedSchemaError } from '../../src/errors';
import { batchAgreement, type ScoredAnswer, scored } from '../helpers/batch-agreement';
import { jsonProblems, jsonRequests, PET_SCHEMA } from '../helpers/json-formats';
import { expectIdle, useCpuEngine } from '../helpers/cpu-engine';

const engine = useCpuEngine(8192);

describe('response_format', () => {
  it('JSON mode and two schemas, greedy and sampled, one at a time: every answer parses and validates, and ends by itself', async () => {
    for (const req of jsonRequests(6)) {
      const r = await engine().chat.completions.create(req);
      expect(jsonProblems(req, r.choices[0]!.message.content)).toEqual([]);
      expect(r.choices[0]!.finish_reason).toBe('stop');
    }
    expectIdle(engine());
  });

  it('8 at once (each row its own grammar, batched): valid, and what each gives one at a time as batching on the CPU promises', async () => {
    const reqs = jsonRequests(8).map((r) => ({ ...r, logprobs: true, top_logprobs: 2 }));
    const alone: ScoredAnswer[] = [];
    for (const req of reqs) alone.push(scored(await engine().chat.completions.create(req)));
    const together = await Promise.all(reqs.map((r) => engine().chat.completions.create(r)));
    for (const [i, r] of together.entries()) expect(jsonProblems(reqs[i]!, r.choices[0]!.message.content)).toEqual([]);
    const problems = together.flatMap((r, i) =>
      batchAgreement(alone[i]!, scored(r), reqs[i]!.temperature !== undefined).problems.map((p) => `request ${i}: ${p}`),
    );
    expect(problems).toEqual([]);
    expect(engine().stats().scheduler.batchSeqs.max).toBeGreaterThanOrEqual(8);
    expectIdle(engine());
  });

  it('streamed, with n = 3 and with logprobs: each choice is valid JSON; the log probabilities are of the allowed tokens', async () => {
    const req = { ...jsonRequests(2)[1]!, n: 3, logprobs: true, top_logprobs: 3 };
    const chunks: ChatCompletionChunk[] = [];
    for await (const c of await engine().chat.completions.create({ ...req, stream: true })) chunks.push(c);
    const texts = ['', '', ''];
    for (const c of chunks) for (const x of c.choices) texts[x.index] += x.delta.content ?? '';
    for (const t of texts) expect(jsonProblems(req, t)).toEqual([]);
    const done = await engine().chat.completions.create(req);
    for (const choice of done.choices) {
      expect(jsonProblems(req, choice.message.content)).toEqual([]);
      // Masked tokens sit at the lowest finite logit: every listed alternative that is likely at all is
      // allowed, and the sampled token's probability is over the allowed ones only.
      for (const t of choice.logprobs!.content!) expect(t.logprob).toBeGreaterThan(-1e6);
    }
    expectIdle(engine());
  });

  it('a schema it cannot enforce is refused by name before any work; the engine goes on', async () => {
    const bad = {
      type: 'object',
      properties: { when: { type: 'string', format: 'date-time' }, price: { type: 'number', minimum: 0 } },
    };
    const e = await engine()
      .chat.completions.create({
        ...jsonRequests(1)[0]!,
        response_format: { type: 'json_schema', json_schema: { name: 'bad', schema: bad } },
      })
      .catch((x: unknown) => x);
    expect(e).toBeInstanceOf(UnsupportedSchemaError);
    expect((e as Error).message).toContain('$.properties.when');
    expect((e as Error).message).toContain('$.properties.price.minimum');
    const shape = await engine()
      .chat.completions.create({ ...jsonRequests(1)[0]!, response_format: { type: 'json_schema' } as never })
      .catch((x: unknown) => x);
    expect(shape).toBeInstanceOf(InvalidRequestError);
    const ok = await engine().chat.completions.create(jsonRequests(2)[1]!);
    expect(jsonProblems(jsonRequests(2)[1]!, ok.choices[0]!.message.content)).toEqual([]);
    expectIdle(engine());
  });

  it('a schema asked for again (its keywords in another order) is not compiled again', async () => {
    // Keywords in any order are one schema; the order of `properties` is not (it is the answer's order).
    const reorder = (o: unknown): unknown =>
      o && typeof o === 'object' && !Array.isArray(o)
        ? Object.fromEntries(
            Object.entries(o as Record<string, unknown>)
              .reverse()
              .map(([k, v]) => [
                k,
                k === 'properties' ? Object.fromEntries(Object.entries(v as object).map(([p, x]) => [p, reorder(x)])) : reorder(v),
              ]),
          )
        : o;
    const grammars = await (engine() as unknown as { responseGrammars(): { grammars(): Promise<{ numGrammars: number }> } })
      .responseGrammars()
      .grammars();
    await engine().chat.completions.create(jsonRequests(2)[1]!);
    const before = grammars.numGrammars;
    const req = {
      ...jsonRequests(2)[1]!,
      response_format: {
        type: 'json_schema' as const,
        json_schema: { name: 'pet', schema: reorder(PET_SCHEMA) as Record<string, unknown> },
      },
    };
    await engine().chat.completions.create(req);
    expect(grammars.numGrammars).toBe(before);
    expect(before).toBeGreaterThanOrEqual(1);
  });
});
