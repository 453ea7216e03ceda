// canonical-schema.ts: one JSON text per schema, whatever order its keywords were written in, so a schema
// asked for twice (by requests that build it differently) compiles once (src/grammar/grammar-cache.ts).
//
// Object keys are sorted, except the members of a `properties` object: their order is the order the
// grammar makes the model write them in (XGrammar emits properties in schema order), which changes the
// answer (a "reasoning" member written before "answer" is a different request than after it). Arrays keep
// their order. Only called on schemas schema-check.ts accepted: plain JSON, no cycles.

/** Canonical JSON of a schema (see the file header). */
export function canonicalSchemaJson(schema: unknown): string {
  return JSON.stringify(canonical(schema, false));
}

/** A copy with object keys sorted; `keepOrder` for the members of a `properties` object. */
export function canonical(value: unknown, keepOrder: boolean): unknown {
  if (Array.isArray(value)) return value.map((v) => canonical(v, false));
  if (value === null || typeof value !== 'object') return value;
  const keys = Object.keys(value);
  if (!keepOrder) keys.sort();
  const out: Record<string, unknown> = {};
  for (const k of keys) out[k] = canonical((value as Record<string, unknown>)[k], k === 'properties' && !keepOrder);
  return out;
}
