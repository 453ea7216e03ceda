// schema-rewrite.ts: the checked schema (schema-check.ts) in the form XGrammar 0.1.27 enforces exactly.
//
// XGrammar builds each grammar rule into an automaton and merges "equivalent" states; in 0.1.27 that merge
// is unsound when one rule alternates between literals: enum ["x50", "x19", "x10"] accepts "x59", and the
// month names ["jan", "feb", ..., "dec"] accept "jal" (fixed upstream after 0.1.34; npm has no newer web
// build). A rule whose alternatives are references to other rules has nothing to merge, and XGrammar keeps
// a $ref target as a rule of its own. So every alternation becomes references:
//
//   { "enum": [a, b, c] }          ->  { "anyOf": [{ "$ref": "#/$defs/tessera_0" }, ...] }  with
//                                      $defs.tessera_0 = { "const": a }, tessera_1 = { "const": b }, ...
//   { "enum": [a] }                ->  { "const": a }
//   { "anyOf" | "oneOf": [S, T] }  ->  { "anyOf": [{ "$ref": ... S }, { "$ref": ... T }] }  (a branch that is
//                                      a $ref already stays one)
//   { "type": "integer", bounds }  ->  the values as an enum (rewritten as above), or the bound XGrammar
//                                      enforces (integer-bounds.ts)
//
// And minLength / maxLength, which XGrammar 0.1.27 compiles to `"\"" [^"\\\r\n]{lo,hi} "\""`: that lets raw
// control characters (a tab, U+001F) into the string, which is then not JSON. The same length as a pattern
// excludes them (and, like XGrammar's own rule, escapes):
//
//   { "type": "string", "minLength": 1, "maxLength": 5 }  ->  { "type": "string",
//                                                              "pattern": "^[^\"\\\\\\u0000-\\u001f]{1,5}$" }
//   { "type": ["string", "null"], "maxLength": 5 }         ->  anyOf of that and { "type": "null" }
//
// Generated $defs are named tessera_<n>, skipping names the schema already uses. The enum's `type` and
// annotations go: the values were checked against the type.

import { integerBounds } from './integer-bounds';

type Json = Record<string, unknown>;

/** A rewritten copy of a checked, canonical schema (see the file header). */
export function rewriteSchema(schema: unknown): unknown {
  if (!isObject(schema)) return schema;
  const root: Json = { ...schema };
  const taken = new Set([...Object.keys(objectOr(root.$defs)), ...Object.keys(objectOr(root.definitions))]);
  const generated: Json = {};
  let next = 0;
  const define = (sub: unknown): Json => {
    let name = `tessera_${next++}`;
    while (taken.has(name)) name = `tessera_${next++}`;
    taken.add(name);
    generated[name] = sub;
    return { $ref: `#/$defs/${name}` };
  };

  const alternatives = (branches: unknown[]): Json => ({ anyOf: branches.map((b) => (isObject(b) && '$ref' in b ? b : define(b))) });

  const alternativesOrOne = (branches: unknown[]): unknown => (branches.length === 1 ? branches[0] : alternatives(branches));

  const values = (list: unknown[]): Json => (list.length === 1 ? { const: list[0] } : alternatives(list.map((v) => ({ const: v }))));

  const rewrite = (node: unknown): unknown => {
    if (!isObject(node)) return node;
    if (Array.isArray(node.enum)) return values(node.enum);
    if (node.type === 'integer') {
      const b = integerBounds(node);
      if (b.kind === 'values') return values(b.values);
      const out = withoutBounds(node);
      if (b.kind === 'one-sided') Object.assign(out, b.minimum !== undefined ? { minimum: b.minimum } : { maximum: b.maximum });
      return out;
    }
    if ('minLength' in node || 'maxLength' in node) return alternativesOrOne(boundedString(node).map(rewrite));
    const out: Json = { ...node };
    if (isObject(node.properties)) out.properties = mapValues(node.properties, rewrite);
    for (const k of ['items', 'additionalProperties']) if (k in node) out[k] = rewrite(node[k]);
    if (Array.isArray(node.prefixItems)) out.prefixItems = node.prefixItems.map(rewrite);
    for (const k of ['anyOf', 'oneOf']) {
      if (!Array.isArray(node[k])) continue;
      delete out[k];
      Object.assign(out, alternatives((node[k] as unknown[]).map(rewrite)));
    }
    for (const k of ['$defs', 'definitions']) if (isObject(node[k])) out[k] = mapValues(node[k] as Json, rewrite);
    return out;
  };

  const out = rewrite(root);
  if (!isObject(out) || Object.keys(generated).length === 0) return out;
  return { ...out, $defs: { ...objectOr(out.$defs), ...generated } };
}

/**
 * A schema with minLength / maxLength as branches: the string one with a pattern in their place, then one
 * of the other types (without the length keywords) if `type` lists more.
 */
function boundedString(node: Json): Json[] {
  const { minLength, maxLength, ...rest } = node;
  const types = Array.isArray(node.type) ? (node.type as string[]) : [node.type as string];
  const pattern = `^[^"\\\\\\u0000-\\u001f]{${(minLength as number | undefined) ?? 0},${(maxLength as number | undefined) ?? ''}}$`;
  const str: Json = { ...rest, type: 'string', pattern };
  const others = types.filter((t) => t !== 'string');
  return others.length ? [str, { ...rest, type: others.length === 1 ? others[0] : others }] : [str];
}

function withoutBounds(node: Json): Json {
  const out: Json = { ...node };
  for (const k of ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum']) delete out[k];
  return out;
}

function mapValues(obj: Json, f: (v: unknown) => unknown): Json {
  const out: Json = {};
  for (const [k, v] of Object.entries(obj)) out[k] = f(v);
  return out;
}

function objectOr(v: unknown): Json {
  return isObject(v) ? v : {};
}

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
