// response_format schemas: what is refused (every keyword with its path, before XGrammar sees it), the
// cache key, and what the accepted keywords enforce, read character by character through XGrammar with a
// one-character-per-token vocabulary. The XGrammar 0.1.27 defects src/grammar/schema-rewrite.ts and
// integer-bounds.ts work around are pinned here too: if a new XGrammar fixes them, these tests say so.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SchemaCompileError, UnsupportedSchemaError } from '../../src/errors';
import { GrammarCache } from '../../src/grammar/grammar-cache';
import { grammarSource, type ResponseFormatSpec } from '../../src/grammar/grammar-source';
import { loadXGrammar } from '../../src/grammar/load-xgrammar';
import { MAX_DEPTH } from '../../src/grammar/limits';
import { checkSchema } from '../../src/grammar/schema-check';
import { charVocabulary, language, takes } from '../helpers/grammar';

const schema = (s: unknown): ResponseFormatSpec => ({
  type: 'json_schema',
  json_schema: { name: 't', schema: s as Record<string, unknown> },
});
const paths = (s: unknown) => checkSchema(s).map((p) => `${p.path}: ${p.reason}`);

describe('schema check', () => {
  it('lists every unsupported keyword with its JSON path, before compiling', () => {
    const s = {
      type: 'object',
      properties: {
        when: { type: 'string', format: 'date-time' },
        code: { type: 'string', pattern: '^[A-Z]{3}$' },
        price: { type: 'number', minimum: 0 },
        tags: { type: 'array', items: { type: 'string' }, uniqueItems: true },
        both: { allOf: [{ type: 'string' }] },
        maybe: { type: 'integer', nullable: true },
        odd: { type: 'string', 'x-custom': 1 },
      },
      required: ['when', 'missing'],
    };
    expect(paths(s)).toEqual([
      expect.stringMatching(/^\$\.properties\.when\.format: format is not enforced reliably/),
      expect.stringMatching(/^\$\.properties\.code\.pattern: pattern is not enforced reliably/),
      expect.stringMatching(/^\$\.properties\.price\.minimum: minimum on type "number" is not enforced/),
      '$.properties.tags.uniqueItems: uniqueItems is not supported',
      '$.properties.both.allOf: allOf is not supported (merge the subschemas into one)',
      expect.stringMatching(/^\$\.properties\.maybe\.nullable: nullable is OpenAPI/),
      expect.stringMatching(/^\$\.properties\.odd\["x-custom"\]: x-custom is not a keyword Tessera knows/),
      expect.stringMatching(/^\$\.required: required names "missing", which properties does not declare/),
    ]);
    let err: unknown;
    try {
      grammarSource(schema(s));
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(UnsupportedSchemaError);
    const e = err as UnsupportedSchemaError;
    expect(e.problems).toHaveLength(8);
    expect(e.message).toContain('\n  $.properties.when.format: format is not enforced');
    expect(e.message).toContain('\n  $.properties.price.minimum: minimum on type "number"');
  });

  it('refuses what XGrammar would ignore or abort on', () => {
    expect(paths({ enum: ['a', 'b'], maxLength: 1 })).toEqual([
      expect.stringMatching(/^\$\.enum: enum cannot be combined with maxLength/),
      '$.maxLength: maxLength needs type "string" beside it (XGrammar ignores it without one)',
    ]);
    expect(paths({ type: 'string', enum: ['a', 1] })).toEqual(['$.enum[1]: enum value 1 is not of type string']);
    expect(paths({ anyOf: [{ type: 'string' }], type: 'string' })).toEqual([
      expect.stringMatching(/^\$\.anyOf: anyOf cannot be combined with type/),
    ]);
    expect(paths({ $ref: '#/$defs/nope' })).toEqual([expect.stringMatching(/^\$\.\$ref: \$ref "#\/\$defs\/nope" must be/)]);
    expect(paths({ minItems: 2 })).toEqual(['$.minItems: minItems needs type "array" beside it (XGrammar ignores it without one)']);
    expect(paths({ type: 'array', minItems: 2 })).toEqual([expect.stringMatching(/^\$\.minItems: minItems 2 cannot be met/)]);
    expect(paths({ type: 'object', properties: { a: false } })).toEqual([expect.stringMatching(/^\$\.properties\.a: false as a schema/)]);
    expect(paths({ type: 'object', properties: { 'a"b': {} } })).toEqual([
      expect.stringMatching(/^\$\.properties\["a\\"b"\]: properties name/),
    ]);
    expect(paths({ type: 'object', properties: { a: {} }, additionalProperties: true })).toEqual([
      expect.stringMatching(/^\$\.additionalProperties: additionalProperties must be false when properties are declared/),
    ]);
    expect(paths({ oneOf: [{ type: 'integer' }, { type: 'number' }] })).toEqual([
      expect.stringMatching(/^\$\.oneOf: oneOf branches must have disjoint types/),
    ]);
    expect(paths({ type: 'string', properties: {} })).toEqual(['$.properties: properties does nothing beside type string; remove it']);
    expect(paths({ type: 'integer', minimum: 5 })).toEqual([expect.stringMatching(/^\$\.minimum: minimum give the integer range 5\.\.∞/)]);
    expect(paths({ type: 'integer', minimum: 0, maximum: 1000 })).toEqual([
      expect.stringMatching(/range 0\.\.1000, which XGrammar 0\.1\.27 does not enforce/),
    ]);
  });

  it('refuses a part no finite value matches, and nesting past MAX_DEPTH', () => {
    expect(paths({ $ref: '#' })).toEqual([expect.stringMatching(/^\$: schema has a part no finite value can match/)]);
    const selfRequiring = { type: 'object', properties: { child: { $ref: '#' } }, required: ['child'] };
    expect(paths(selfRequiring)).toEqual([expect.stringMatching(/no finite value can match/)]);
    expect(paths({ $defs: { d: { anyOf: [{ $ref: '#/$defs/d' }, { type: 'null' }] } }, $ref: '#/$defs/d' })).toEqual([
      expect.stringMatching(/^\$: \$ref makes a subschema refer to itself through \$ref \/ anyOf \/ oneOf alone/),
    ]);
    const tree = { type: 'object', properties: { children: { type: 'array', items: { $ref: '#' } } }, required: ['children'] };
    expect(paths(tree)).toEqual([]);
    let deep: unknown = { type: 'integer' };
    for (let i = 0; i < MAX_DEPTH; i++) deep = { type: 'object', properties: { a: deep }, required: ['a'] };
    expect(paths(deep)).toEqual([expect.stringMatching(/^\$: schema is nested \d+ levels deep/)]);
  });

  it('accepts a typical generated schema: annotations, $defs and $ref, anyOf with null, enums, bounds', () => {
    const s = {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      title: 'Order',
      type: 'object',
      $defs: {
        Item: {
          title: 'Item',
          type: 'object',
          properties: { sku: { type: 'string', maxLength: 12 }, qty: { type: 'integer', minimum: 1 } },
          required: ['sku', 'qty'],
          additionalProperties: false,
        },
      },
      properties: {
        items: { type: 'array', items: { $ref: '#/$defs/Item' }, minItems: 1, maxItems: 5, description: 'lines' },
        status: { enum: ['open', 'paid', 'shipped'], default: 'open' },
        note: { anyOf: [{ type: 'string' }, { type: 'null' }], default: null },
        rating: { type: 'integer', minimum: 1, maximum: 5 },
      },
      required: ['items', 'status', 'note', 'rating'],
      additionalProperties: false,
    };
    expect(paths(s)).toEqual([]);
  });

  it('keys a schema by its canonical JSON: keyword order does not matter, property order does', () => {
    const a = { type: 'object', properties: { x: { type: 'integer', minimum: 0 }, y: { type: 'string' } }, required: ['x'] };
    const b = { required: ['x'], properties: { x: { minimum: 0, type: 'integer' }, y: { type: 'string' } }, type: 'object' };
    const swapped = { type: 'object', properties: { y: { type: 'string' }, x: { type: 'integer', minimum: 0 } }, required: ['x'] };
    expect(grammarSource(schema(a)).key).toBe(grammarSource(schema(b)).key);
    expect(grammarSource(schema(a)).key).not.toBe(grammarSource(schema(swapped)).key);
    expect(grammarSource({ type: 'json_object' }).key).toBe('json_object');
  });
});

describe('what the accepted keywords enforce (XGrammar, one character per token)', () => {
  let cache: GrammarCache;
  beforeAll(async () => {
    cache = await GrammarCache.fromVocabulary(charVocabulary());
  });
  afterAll(() => cache.dispose());

  it('an enum is exactly its values (XGrammar 0.1.27 alone lets "jal" through the month names)', async () => {
    const months = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
    expect(await language(cache, schema({ enum: months }))).toEqual(months.map((m) => JSON.stringify(m)).sort());
    const mixed = ['x50', 'x19', 'x10', 7, null, { a: [1, 'b'] }, [true]];
    expect(await language(cache, schema({ enum: mixed }))).toEqual(mixed.map((v) => JSON.stringify(v)).sort());
    expect(await language(cache, schema({ anyOf: [{ const: 'x50' }, { const: 'x19' }, { const: 'x10' }] }))).toEqual([
      '"x10"',
      '"x19"',
      '"x50"',
    ]);

    // The defect itself, in the package as installed: a plain enum of the month names, compiled directly.
    const xg = await loadXGrammar();
    const vocab = charVocabulary();
    const info = await xg.api.TokenizerInfo.createTokenizerInfo(vocab.pieces, 'raw', false, vocab.vocabSize, vocab.stopTokenIds);
    const compiler = await xg.api.GrammarCompiler.createGrammarCompiler(info, false);
    const compiled = await compiler.compileJSONSchema(JSON.stringify({ enum: months }), false, -1, [',', ':'], true);
    const m = await xg.api.GrammarMatcher.createGrammarMatcher(compiled);
    const accepted = [...'"jal"'].every((ch) => m.acceptToken(vocab.pieces.indexOf(ch))) && m.acceptToken(vocab.stopTokenIds[0]!);
    for (const x of [m, compiled, compiler, info]) x.dispose();
    expect(accepted, 'XGrammar accepted "jal": if this fails, its enum bug is fixed and schema-rewrite.ts may go').toBe(true);
  });

  it('integer bounds are exact: ranges (as values) and the one-sided forms kept', async () => {
    const cases: Array<[Record<string, number>, (v: number) => boolean, number, number]> = [
      [{ minimum: 0 }, (v) => v >= 0, -300, 300],
      [{ minimum: 1 }, (v) => v >= 1, -300, 300],
      [{ maximum: 0 }, (v) => v <= 0, -300, 300],
      [{ maximum: -1 }, (v) => v <= -1, -300, 300],
      [{ exclusiveMinimum: -1 }, (v) => v >= 0, -30, 30],
      [{ minimum: -120, maximum: 37 }, (v) => v >= -120 && v <= 37, -200, 100],
      [{ minimum: 101, maximum: 120 }, (v) => v >= 101 && v <= 120, 80, 140],
      [{ minimum: 950, exclusiveMaximum: 1010.5 }, (v) => v >= 950 && v <= 1010, 930, 1030],
    ];
    for (const [bounds, inRange, lo, hi] of cases) {
      const f = schema({ type: 'integer', ...bounds });
      const wrong: number[] = [];
      for (let v = lo; v <= hi; v++) if ((await takes(cache, f, String(v))) !== inRange(v)) wrong.push(v);
      expect(wrong, JSON.stringify(bounds)).toEqual([]);
      for (const bad of ['-0', '01', '1.0', '1e1']) expect(await takes(cache, f, bad), `${JSON.stringify(bounds)} ${bad}`).toBe(false);
    }
  });

  it('length-bounded strings count characters and never hold control characters', async () => {
    const f = schema({ type: ['string', 'null'], minLength: 1, maxLength: 3 });
    const cases: Array<[string, boolean]> = [
      ['""', false],
      ['"a"', true],
      ['"abc"', true],
      ['"abcd"', false],
      ['"é😀é"', true],
      ['"é😀é😀"', false],
      ['"a\tb"', false],
      ['"a\u001fb"', false],
      ['null', true],
    ];
    for (const [text, want] of cases) expect(await takes(cache, f, text), text).toBe(want);
    // Unbounded strings take escapes, bounded ones do not (as XGrammar's own length rule).
    expect(await takes(cache, schema({ type: 'string' }), '"a\\n\\u00e9"')).toBe(true);
    expect(await takes(cache, schema({ type: 'string' }), '"a\tb"')).toBe(false);
  });

  it('objects: declared members in order, required ones present, nothing undeclared, compact', async () => {
    const f = schema({ type: 'object', properties: { a: { type: 'integer' }, b: { type: 'boolean' } }, required: ['b'] });
    expect(await takes(cache, f, '{"a":1,"b":true}')).toBe(true);
    expect(await takes(cache, f, '{"b":false}')).toBe(true);
    expect(await takes(cache, f, '{"a":1}')).toBe(false);
    expect(await takes(cache, f, '{"b":true,"a":1}')).toBe(false);
    expect(await takes(cache, f, '{"b":true,"c":1}')).toBe(false);
    expect(await takes(cache, f, '{"a": 1,"b":true}')).toBe(false);
    const map = schema({ type: 'object', additionalProperties: { type: 'integer' } });
    expect(await takes(cache, map, '{"x":1,"y":2}')).toBe(true);
    expect(await takes(cache, map, '{"x":"1"}')).toBe(false);
  });

  it('arrays: items, prefixItems, minItems and maxItems', async () => {
    const f = schema({
      type: 'array',
      prefixItems: [{ type: 'string', maxLength: 2 }],
      items: { type: 'integer', minimum: 0 },
      minItems: 2,
      maxItems: 3,
    });
    expect(await takes(cache, f, '["ab",1]')).toBe(true);
    expect(await takes(cache, f, '["ab",1,2]')).toBe(true);
    expect(await takes(cache, f, '["ab"]')).toBe(false);
    expect(await takes(cache, f, '["ab",1,2,3]')).toBe(false);
    expect(await takes(cache, f, '[1,1]')).toBe(false);
    expect(await takes(cache, f, '["ab",-1]')).toBe(false);
  });

  it('json_object: one object, any members, compact', async () => {
    const f: ResponseFormatSpec = { type: 'json_object' };
    expect(await takes(cache, f, '{"a":[1,-2.5e3,"x\\"y",null,true],"b":{"c":{}}}')).toBe(true);
    expect(await takes(cache, f, '{}')).toBe(true);
    expect(await takes(cache, f, '[1]')).toBe(false);
    expect(await takes(cache, f, '"x"')).toBe(false);
    expect(await takes(cache, f, '{"a": 1}')).toBe(false);
    expect(await takes(cache, f, '{"a":01}')).toBe(false);
    expect(await takes(cache, f, '{"a":"\t"}')).toBe(false);
  });

  it('the deepest schemas accepted compile and leave XGrammar usable', async () => {
    const shapes: Array<(inner: unknown) => unknown> = [
      (x) => ({ type: 'object', properties: { a: x, b: { type: 'string' } } }),
      (x) => ({ anyOf: [{ type: 'object', properties: { a: x }, required: ['a'] }, { type: 'null' }] }),
      (x) => ({ type: 'array', prefixItems: [x], items: false }),
    ];
    for (const wrap of shapes) {
      let deepest: unknown;
      for (let s: unknown = { enum: ['x', 'y'] }; checkSchema(s).length === 0; s = wrap(s)) deepest = s;
      await cache.compile(schema(deepest));
      expect(await takes(cache, { type: 'json_object' }, '{"a":1}')).toBe(true);
    }
  });

  it('a schema XGrammar accepts compiles once per key; the compile time is reported', async () => {
    const a = schema({ type: 'object', properties: { v: { enum: ['p', 'q'] } }, required: ['v'] });
    const b = schema({ required: ['v'], properties: { v: { enum: ['p', 'q'] } }, type: 'object' });
    const first = await cache.compile(a);
    const second = await cache.compile(b);
    expect(first.cached).toBe(false);
    expect(second).toEqual({ ...first, cached: true });
    expect(first.compileMs).toBeGreaterThan(0);
  });

  it('SchemaCompileError is what XGrammar refusing a checked schema would raise', () => {
    // Not reachable from a checked schema (src/grammar/schema-check.ts refuses what XGrammar rejects); the
    // class and its message are checked here, the XGrammar path in grammar-abort.test.ts.
    const e = new SchemaCompileError('response_format.json_schema.schema', 'minItems is greater than maxItems: 3 > 2');
    expect(e.message).toMatch(
      /^XGrammar could not compile response_format\.json_schema\.schema: minItems is greater than maxItems: 3 > 2\./,
    );
  });
});
