// The response_format cases the engine tests run in Node (CPU and WebGPU) and in Chromium: JSON mode and
// two JSON schemas (nested objects, arrays, enums, integers with bounds, booleans, $ref, anyOf), and the
// check that an answer parses and validates (json-schema-subset.ts). Strings and arrays are bounded, so a
// random-weight model's answer ends within max_tokens.

import type { ChatCompletionRequest, ResponseFormat } from '../../src/engine/types';
import { validate } from './json-schema-subset';

export const PET_SCHEMA = {
  type: 'object',
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 12 },
    kind: { enum: ['cat', 'dog', 'bird'] },
    age: { type: 'integer', minimum: 0, maximum: 30 },
    tags: { type: 'array', items: { type: 'string', maxLength: 6 }, maxItems: 3 },
    owner: {
      type: 'object',
      properties: {
        first: { type: 'string', maxLength: 8 },
        score: { type: 'integer', minimum: -5, maximum: 100 },
        verified: { type: 'boolean' },
      },
      required: ['first', 'score'],
      additionalProperties: false,
    },
  },
  required: ['name', 'kind', 'age', 'tags', 'owner'],
  additionalProperties: false,
} as const;

export const RECEIPT_SCHEMA = {
  type: 'object',
  $defs: {
    line: {
      type: 'object',
      properties: {
        item: { type: 'string', maxLength: 10 },
        qty: { type: 'integer', minimum: 1, maximum: 9 },
        unit: { enum: ['each', 'kg', 'l'] },
      },
      required: ['item', 'qty', 'unit'],
      additionalProperties: false,
    },
  },
  properties: {
    currency: { enum: ['EUR', 'USD', 'GBP'] },
    lines: { type: 'array', items: { $ref: '#/$defs/line' }, minItems: 1, maxItems: 2 },
    paid: { type: 'boolean' },
    note: { anyOf: [{ type: 'string', maxLength: 8 }, { type: 'null' }] },
  },
  required: ['currency', 'lines', 'paid', 'note'],
  additionalProperties: false,
} as const;

export interface JsonCase {
  label: string;
  format: Exclude<ResponseFormat, { type: 'text' }>;
  /** The schema the answer must validate against (JSON mode: any object). */
  schema: unknown;
}

export const JSON_CASES: readonly JsonCase[] = [
  { label: 'json_object', format: { type: 'json_object' }, schema: { type: 'object' } },
  {
    label: 'pet schema',
    format: { type: 'json_schema', json_schema: { name: 'pet', schema: PET_SCHEMA, strict: true } },
    schema: PET_SCHEMA,
  },
  {
    label: 'receipt schema',
    format: { type: 'json_schema', json_schema: { name: 'receipt', schema: RECEIPT_SCHEMA, strict: true } },
    schema: RECEIPT_SCHEMA,
  },
];

/** Requests over JSON_CASES: greedy and seeded, `count` of them (cycling through the cases). */
export function jsonRequests(count: number, maxTokens = 160): Array<ChatCompletionRequest & { stream?: false }> {
  return Array.from({ length: count }, (_, i) => {
    const c = JSON_CASES[i % JSON_CASES.length]!;
    return {
      messages: [{ role: 'user', content: `Describe request ${i} as JSON.` }],
      max_tokens: maxTokens,
      response_format: c.format,
      ...(i % 2 === 1 ? { temperature: 1, seed: 100 + i } : {}),
    };
  });
}

/** Why `text` is not a valid answer for `request` (parse or schema failures); [] when it is. */
export function jsonProblems(request: ChatCompletionRequest, text: string | null): string[] {
  const format = request.response_format;
  const c = JSON_CASES.find((x) => JSON.stringify(x.format) === JSON.stringify(format));
  if (!c) return [`no JSON case for ${JSON.stringify(format)}`];
  let value: unknown;
  try {
    value = JSON.parse(text ?? '');
  } catch (e) {
    return [`${c.label}: ${JSON.stringify(text)} does not parse: ${(e as Error).message}`];
  }
  return validate(value, c.schema).map((p) => `${c.label}: ${p} in ${text}`);
}
