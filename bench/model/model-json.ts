// The response_format part of `npm run bench:model` (Node, Dawn): decoding with a JSON schema against
// free decoding on the 256M shape, the same engine and prompt, requests alternating (free, schema, free,
// schema, ...) so that drift on this machine falls on both sides; and the cost of the grammar itself:
// XGrammar's TokenizerInfo for the vocabulary, the cold compile of a 20-field schema, a cached compile, and
// the per-token mask. There is no peer column: transformers.js has no grammar-constrained decoding; the
// peer of constrained decoding is free decoding on the same engine (goal: >= 0.9x its tok/s).
// Loaded through the benchmarks' Vite server (server.ssrLoadModule), like model-node.ts.

import { createEngine } from '../../src/engine/create-node';
import type { Engine } from '../../src/engine/engine';
import type { ChatCompletionRequest } from '../../src/engine/types';
import { GrammarCache } from '../../src/grammar/grammar-cache';
import { median } from '../harness/timing';
import { BENCH_ENCODER_OPTIONS } from './model-engine-options';
import type { JsonFigures, JsonRunOptions } from './model-json-report';

export type { JsonFigures, JsonRunOptions };

/** A receipt-like schema: strings, enums, bounded integers, an array of objects (what apps ask for). */
export const BENCH_SCHEMA = {
  type: 'object',
  properties: {
    merchant: { type: 'string', maxLength: 40 },
    currency: { enum: ['EUR', 'USD', 'GBP', 'CHF'] },
    items: {
      type: 'array',
      maxItems: 8,
      items: {
        type: 'object',
        properties: { name: { type: 'string', maxLength: 30 }, qty: { type: 'integer', minimum: 1, maximum: 99 } },
        required: ['name', 'qty'],
        additionalProperties: false,
      },
    },
    paid: { type: 'boolean' },
  },
  required: ['merchant', 'currency', 'items', 'paid'],
  additionalProperties: false,
};

/** 20 fields of every supported kind. */
export function twentyFieldSchema(): Record<string, unknown> {
  const kinds = [
    { type: 'string', maxLength: 24 },
    { type: 'integer', minimum: 0, maximum: 200 },
    { type: 'boolean' },
    { enum: ['low', 'medium', 'high'] },
    { type: 'array', items: { type: 'string', maxLength: 12 }, maxItems: 4 },
  ];
  const properties = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`field_${i}`, kinds[i % kinds.length]]));
  return { type: 'object', properties, required: Object.keys(properties), additionalProperties: false };
}

function request(maxTokens: number, schema: boolean): ChatCompletionRequest & { stream?: false } {
  return {
    messages: [{ role: 'user', content: 'Read this receipt and give me its merchant, currency, items and whether it was paid.' }],
    max_tokens: maxTokens,
    ...(schema ? { response_format: { type: 'json_schema', json_schema: { name: 'receipt', schema: BENCH_SCHEMA } } } : {}),
  };
}

async function grammarCost(engine: Engine, answers: number[][], log: (line: string) => void): Promise<JsonFigures['grammar']> {
  const processor = engine.processor;
  const cache = await GrammarCache.create(processor.tokenizer, {
    vocabSize: engine.model.runner.text.vocabSize,
    stopTokenIds: processor.stopTokenIds,
  });
  try {
    const format = { type: 'json_schema' as const, json_schema: { name: 'twenty', schema: twentyFieldSchema() } };
    const t0 = performance.now();
    const first = await cache.compile(format);
    const compile20Ms = performance.now() - t0;
    const t1 = performance.now();
    await cache.compile(format);
    const compile20CachedMs = performance.now() - t1;
    log(
      `json: TokenizerInfo ${cache.tokenizerInfoMs.toFixed(0)} ms; 20-field schema compiled in ${compile20Ms.toFixed(0)} ms (XGrammar ${first.compileMs.toFixed(0)} ms), again ${compile20CachedMs.toFixed(2)} ms`,
    );
    const mask = new Int32Array(Math.ceil(engine.model.runner.text.vocabSize / 32));
    const maskMs: number[] = [];
    const acceptMs: number[] = [];
    for (const ids of answers) {
      const m = await cache.createMatcher({ type: 'json_schema', json_schema: { name: 'receipt', schema: BENCH_SCHEMA } });
      try {
        for (const id of ids) {
          const a = performance.now();
          m.fillMask(mask);
          const b = performance.now();
          m.accept(id);
          maskMs.push(b - a);
          acceptMs.push(performance.now() - b);
        }
      } finally {
        m.dispose();
      }
    }
    return { tokenizerInfoMs: cache.tokenizerInfoMs, compile20Ms, compile20CachedMs, maskMs: median(maskMs), acceptMs: median(acceptMs) };
  } finally {
    cache.dispose();
  }
}

export async function runJson(o: JsonRunOptions): Promise<JsonFigures> {
  o.log(`json: loading ${o.modelDir} (f32, WebGPU)`);
  const engine = await createEngine({ model: o.modelDir, encoder: BENCH_ENCODER_OPTIONS, dtype: 'f32', device: 'webgpu' });
  try {
    // Warm-up: the first schema request loads XGrammar and compiles the schema (reported separately below).
    await engine.chat.completions.create(request(4, false));
    await engine.chat.completions.create(request(4, true));
    const free: number[] = [];
    const schema: number[] = [];
    const answers: Array<{ tokens: number; parses: boolean }> = [];
    const schemaIds: number[][] = [];
    for (let rep = 0; rep < o.reps; rep++) {
      for (const constrained of [false, true]) {
        const r = await engine.chat.completions.create(request(o.maxNewTokens, constrained));
        const steps = r.tessera.timings.decodeStepMs;
        (constrained ? schema : free).push(...steps);
        const tps = steps.length > 0 ? (steps.length * 1000) / steps.reduce((a, b) => a + b, 0) : 0;
        if (constrained) {
          let parses = true;
          try {
            JSON.parse(r.choices[0]!.message.content);
          } catch {
            parses = false;
          }
          answers.push({ tokens: r.tessera.tokenIds.length, parses });
          schemaIds.push(r.tessera.tokenIds);
        }
        o.log(
          `json: rep ${rep + 1} ${constrained ? 'schema' : 'free  '}: ${r.tessera.tokenIds.length} tokens, ${tps.toFixed(2)} tok/s decode`,
        );
      }
    }
    const freeTps = 1000 / median(free);
    const schemaTps = 1000 / median(schema);
    const grammar = await grammarCost(engine, schemaIds, o.log);
    return {
      freeTokensPerSecond: freeTps,
      schemaTokensPerSecond: schemaTps,
      ratio: schemaTps / freeTps,
      freeSteps: free.length,
      schemaSteps: schema.length,
      schemaAnswers: answers,
      grammar,
    };
  } finally {
    engine.destroy();
  }
}
