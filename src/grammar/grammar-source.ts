// grammar-source.ts: what XGrammar compiles for a request's response_format, and the cache key naming it.
//
//   response_format                          key                       compiled from
//   { type: 'json_object' }                  'json_object'             JSON_OBJECT_EBNF (json-object-grammar.ts)
//   { type: 'json_schema', json_schema }     'json_schema:' + the      the schema, checked (schema-check.ts) and
//                                            canonical schema JSON     rewritten (schema-rewrite.ts)
//   { type: 'structural_tag', ... }          'structural_tag:' + its   XGrammar's structural tag (tool calls:
//                                            JSON                      tool-call-grammar.ts builds it, its
//                                                                      schemas already checked and rewritten)
//
// json_schema.name and .strict do not change the grammar, so they are not in the key. Every schema is
// compiled in XGrammar's strict mode whatever `strict` says: members and items the schema does not declare
// are never written (an object schema without properties or additionalProperties is then always {}), so
// the answer is one of the values the schema accepts either way. A missing schema accepts any JSON value.
// Where a schema allows any value ({}, true, the values of additionalProperties: true), XGrammar's own rule
// for it applies, which separates the members and items inside that value with ', ' (measured): still one
// fixed form, not free whitespace.

import { UnsupportedSchemaError } from '../errors';
import { canonical, canonicalSchemaJson } from './canonical-schema';
import { JSON_OBJECT_EBNF } from './json-object-grammar';
import { checkSchema } from './schema-check';
import { rewriteSchema } from './schema-rewrite';

/** OpenAI's response_format, less { type: 'text' } (the shape src/engine validates). */
export type ResponseFormatSpec =
  | { type: 'json_object' }
  | { type: 'json_schema'; json_schema: { name: string; schema?: Record<string, unknown>; strict?: boolean | null } }
  | { type: 'structural_tag'; structural_tag: Record<string, unknown> };

export type GrammarSource =
  | { kind: 'ebnf'; key: string; ebnf: string }
  | {
      kind: 'json_schema';
      key: string;
      /** The rewritten schema XGrammar compiles, as JSON. */
      schemaJson: string;
    }
  | { kind: 'structural_tag'; key: string; json: string };

/** The schema XGrammar compiles for `schema`: checked (UnsupportedSchemaError listing every problem) and rewritten. */
export function enforceableSchema(schema: Record<string, unknown>): Record<string, unknown> {
  const problems = checkSchema(schema);
  if (problems.length) throw new UnsupportedSchemaError(problems);
  return rewriteSchema(canonical(schema, false)) as Record<string, unknown>;
}

/** The grammar for `format`; UnsupportedSchemaError (listing every problem) when its schema cannot be enforced. */
export function grammarSource(format: ResponseFormatSpec): GrammarSource {
  if (format.type === 'json_object') return { kind: 'ebnf', key: 'json_object', ebnf: JSON_OBJECT_EBNF };
  if (format.type === 'structural_tag') {
    const json = JSON.stringify(format.structural_tag);
    return { kind: 'structural_tag', key: `structural_tag:${json}`, json };
  }
  const schema = format.json_schema.schema ?? {};
  const problems = checkSchema(schema);
  if (problems.length) throw new UnsupportedSchemaError(problems);
  return {
    kind: 'json_schema',
    key: `json_schema:${canonicalSchemaJson(schema)}`,
    schemaJson: JSON.stringify(rewriteSchema(canonical(schema, false))),
  };
}
