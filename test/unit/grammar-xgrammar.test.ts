// XGrammar's loading and its WebAssembly's failure mode. In a file of its own: the abort tested last leaves
// this process's XGrammar instance refused for good (as src/grammar/load-xgrammar.ts intends).

import { describe, expect, it } from 'vitest';
import { GrammarLoadError, SchemaCompileError } from '../../src/errors';
import { GrammarCache } from '../../src/grammar/grammar-cache';
import type { GrammarSource } from '../../src/grammar/grammar-source';
import { loadXGrammar } from '../../src/grammar/load-xgrammar';
import { charVocabulary, takes } from '../helpers/grammar';

describe('XGrammar', () => {
  it('loads once, in Node, and leaves no CommonJS globals behind', async () => {
    const g = globalThis as Record<string, unknown>;
    const before = [typeof g.require, typeof g.__filename];
    const [a, b] = await Promise.all([loadXGrammar(), loadXGrammar()]);
    expect(a).toBe(b);
    expect(a.damage).toBeUndefined();
    expect(await loadXGrammar()).toBe(a);
    expect([typeof g.require, typeof g.__filename]).toEqual(before);
  });

  it("an abort is a SchemaCompileError with XGrammar's own message; the instance is refused afterwards", async () => {
    const cache = await GrammarCache.fromVocabulary(charVocabulary());
    const open = await cache.createMatcher({ type: 'json_object' });
    // Past schema-check.ts (which refuses it): what XGrammar does with a schema it cannot handle.
    const compileSource = (cache as unknown as { compileSource(s: GrammarSource): Promise<unknown> }).compileSource.bind(cache);
    const bogus: GrammarSource = { kind: 'json_schema', key: 'test', schemaJson: '{"type":"bogus"}' };
    const err = await compileSource(bogus).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SchemaCompileError);
    expect((err as Error).message).toMatch(/^XGrammar could not compile response_format\.json_schema\.schema: Unsupported type "bogus"\./);
    expect((await loadXGrammar()).damage).toBe('compiling response_format.json_schema.schema');
    await expect(takes(cache, { type: 'json_object' }, '{}')).rejects.toThrow(GrammarLoadError);
    expect(() => open.fillMask(new Int32Array(open.maskWords))).toThrow(
      /aborted earlier \(while compiling response_format\.json_schema\.schema\)/,
    );
    open.dispose();
    cache.dispose();
  });
});
