// schema-check.ts: which JSON Schema keywords a response_format schema may use, decided by testing what
// XGrammar 0.1.27 enforces (each keyword compiled alone, then a value breaking only that keyword matched
// against the grammar; the tests are in test/unit/grammar-schema.test.ts). Anything else is a SchemaProblem,
// all reported at once (UnsupportedSchemaError) before XGrammar sees the schema: a keyword it ignored would
// let answers through that do not validate, and a schema it cannot handle aborts its WebAssembly
// (src/grammar/load-xgrammar.ts).
//
//   keyword                          accepted                            why the limit
//   type                             a name or a list of names
//   properties, required             member names without '"', '\' or    XGrammar does not escape names (abort);
//                                    control characters; required names  strict mode (no undeclared members)
//                                    must be declared                    would let {} pass
//   additionalProperties             false, or true / a schema when      XGrammar lets a declared name repeat as
//                                    there are no properties             an extra member: {"a":1,"a":"x"}
//   items, prefixItems               a schema (items may be a boolean)   items as a list aborts
//   minItems, maxItems               with type "array", at most 256;     ignored without a type; strict mode
//                                    past prefixItems only with items    writes no undeclared items (abort)
//   minLength, maxLength             with type "string", at most 64      ignored without a type; compile time
//                                    (rewritten: schema-rewrite.ts)      (limits.ts)
//   enum, const                      up to 256 values; beside them only  XGrammar ignores siblings of enum/const
//                                    type (checked) and annotations
//   minimum, maximum, exclusive*     type "integer": a range of at most  XGrammar's own ranges are wrong
//                                    256 integers, minimum 0 or 1 alone, (minimum 5 accepts 4, maximum 150
//                                    maximum 0 or -1 alone               accepts 159); integer-bounds.ts
//   anyOf                            with annotations beside it only     siblings are ignored
//   oneOf                            like anyOf, branches of disjoint    enforced as anyOf
//                                    types
//   $ref, $defs, definitions         '#', '#/$defs/<name>',              a missing target or a '~' escape
//                                    '#/definitions/<name>'; names of    aborts; siblings are ignored
//                                    letters, digits, '_', '-', '.'
//   title, description, default, examples, $comment, $schema, $id, deprecated, readOnly, writeOnly: annotations
//
// Whole-schema checks: every part must match some finite value (else the model has no token to write),
// no part may refer to itself through $ref / anyOf / oneOf alone, and nesting and size are bounded.
//
// Refused outright: format and pattern (XGrammar compiles them through a regex automaton whose state merging
// is unsound in 0.1.27: pattern ^(x50|x19|x10)$ accepts "x59"), bounds on type "number" (0..10 accepts 10.5,
// minimum 1.5 accepts "1x5"), multipleOf, uniqueItems, contains, allOf, not, if/then/else, dependent*,
// patternProperties, propertyNames, min/maxProperties, unevaluated*, nullable (OpenAPI), boolean schema false
// outside items/additionalProperties (aborts), and any keyword not listed here.

import type { SchemaProblem } from '../errors';
import { integerBounds } from './integer-bounds';
import { MAX_DEPTH, MAX_ENUM_VALUES, MAX_ITEMS, MAX_STRING_LENGTH, MAX_SUBSCHEMAS } from './limits';

const ANNOTATIONS = new Set([
  'title',
  'description',
  'default',
  'examples',
  '$comment',
  '$schema',
  '$id',
  'deprecated',
  'readOnly',
  'writeOnly',
]);
const TYPES = new Set(['string', 'number', 'integer', 'boolean', 'null', 'object', 'array']);
const DEF_NAME = /^[A-Za-z0-9_.-]{1,64}$/;

const NOT_SUPPORTED = 'is not supported';
const REFUSED = new Map<string, string>([
  [
    'format',
    'is not enforced reliably by XGrammar 0.1.27 (its regex automaton can accept strings outside the format); validate the parsed answer instead',
  ],
  [
    'pattern',
    'is not enforced reliably by XGrammar 0.1.27 (its regex automaton can accept strings the pattern does not match); validate the parsed answer instead',
  ],
  ['allOf', 'is not supported (merge the subschemas into one)'],
  ['unevaluatedProperties', 'is not supported (undeclared members are never written: use additionalProperties)'],
  ['nullable', 'is OpenAPI, not JSON Schema: use type ["…", "null"] or anyOf with { "type": "null" }'],
  ...[
    'multipleOf',
    'uniqueItems',
    'contains',
    'minContains',
    'maxContains',
    'not',
    'if',
    'then',
    'else',
    'dependentRequired',
    'dependentSchemas',
    'dependencies',
    'patternProperties',
    'propertyNames',
    'minProperties',
    'maxProperties',
    'unevaluatedItems',
  ].map((k): [string, string] => [k, NOT_SUPPORTED]),
]);

type Json = Record<string, unknown>;

/** Every problem of `schema` (empty: it can be enforced exactly), in document order. */
export function checkSchema(schema: unknown): SchemaProblem[] {
  const walk = new SchemaWalk(schema);
  walk.visit(schema, '$', 'root');
  if (walk.problems.length === 0) walk.checkDepth();
  if (walk.problems.length === 0) walk.checkFinite();
  if (walk.problems.length === 0) walk.checkUnguardedCycles();
  return walk.problems;
}

/** Where a subschema sits: some places also allow a boolean schema. */
type Place = 'root' | 'items' | 'additionalProperties' | 'other';

class SchemaWalk {
  readonly problems: SchemaProblem[] = [];
  private numSubschemas = 0;
  /** $ref string -> its target, for those that resolve. */
  private readonly targets = new Map<string, unknown>();

  constructor(private readonly root: unknown) {}

  private add(path: string, keyword: string, reason: string): void {
    this.problems.push({ path, keyword, reason: `${keyword} ${reason}` });
  }

  visit(node: unknown, path: string, place: Place): void {
    if (++this.numSubschemas > MAX_SUBSCHEMAS) {
      if (this.numSubschemas === MAX_SUBSCHEMAS + 1) this.add(path, 'schema', `has more than ${MAX_SUBSCHEMAS} subschemas`);
      return;
    }
    if (node === true) return;
    if (node === false) {
      if (place !== 'items' && place !== 'additionalProperties')
        this.add(path, 'false', 'as a schema is only accepted for items and additionalProperties');
      return;
    }
    if (!isObject(node)) {
      this.add(path, 'schema', `is ${describe(node)}; a schema is an object (or true / false)`);
      return;
    }
    if (pathDepth(path) > MAX_DEPTH * 2) {
      this.add(path, 'schema', `is nested too deeply (more than ${MAX_DEPTH} levels)`);
      return;
    }
    for (const [k, v] of Object.entries(node)) {
      if (REFUSED.has(k)) this.add(at(path, k), k, REFUSED.get(k)!);
      else if (!KNOWN.has(k) && !ANNOTATIONS.has(k))
        this.add(at(path, k), k, 'is not a keyword Tessera knows; remove it (unknown keywords are not silently ignored)');
      if (typeof v === 'number' && !Number.isFinite(v)) this.add(at(path, k), k, 'is not a finite number');
    }
    const types = this.types(node, path);
    if (this.misplaced(node, path, types).size) return;
    this.composition(node, path);
    this.values(node, path, types);
    this.objectKeywords(node, path);
    this.arrayKeywords(node, path, types);
    this.lengthKeywords(node, path, types, 'minLength', 'maxLength', 'string');
    this.lengthKeywords(node, path, types, 'minItems', 'maxItems', 'array');
    this.numberKeywords(node, path, types);
    for (const defs of ['$defs', 'definitions'] as const) {
      if (!(defs in node)) continue;
      const d = node[defs];
      if (!isObject(d)) {
        this.add(at(path, defs), defs, 'must be an object of named schemas');
        continue;
      }
      if (path !== '$') this.add(at(path, defs), defs, 'is only accepted at the root of the schema');
      for (const [name, sub] of Object.entries(d)) {
        if (!DEF_NAME.test(name))
          this.add(at(at(path, defs), name), defs, `name ${JSON.stringify(name)} must be 1 to 64 letters, digits, '_', '-' or '.'`);
        this.visit(sub, at(at(path, defs), name), 'other');
      }
    }
  }

  /** The declared types (undefined: none declared). */
  private types(node: Json, path: string): Set<string> | undefined {
    if (!('type' in node)) return undefined;
    const list = Array.isArray(node.type) ? node.type : [node.type];
    const bad = list.filter((t) => typeof t !== 'string' || !TYPES.has(t));
    if (bad.length || list.length === 0 || new Set(list).size !== list.length) {
      this.add(at(path, 'type'), 'type', `must name distinct types among ${[...TYPES].join(', ')}`);
      return undefined;
    }
    return new Set(list as string[]);
  }

  private composition(node: Json, path: string): void {
    const others = Object.keys(node).filter((k) => !ANNOTATIONS.has(k) && k !== '$defs' && k !== 'definitions');
    for (const key of ['anyOf', 'oneOf'] as const) {
      if (!(key in node)) continue;
      const branches = node[key];
      if (!Array.isArray(branches) || branches.length === 0) {
        this.add(at(path, key), key, 'must be a non-empty list of schemas');
        continue;
      }
      const siblings = others.filter((k) => k !== key);
      if (siblings.length)
        this.add(at(path, key), key, `cannot be combined with ${siblings.join(', ')} (XGrammar ignores them); move them into each branch`);
      branches.forEach((b, i) => {
        this.visit(b, `${at(path, key)}[${i}]`, 'other');
      });
      if (key === 'oneOf' && !disjointBranches(branches)) {
        this.add(
          at(path, key),
          key,
          'branches must have disjoint types (it is enforced as anyOf, so a value matching two branches would pass); use anyOf',
        );
      }
    }
    if ('$ref' in node) {
      const ref = node.$ref;
      const siblings = others.filter((k) => k !== '$ref');
      if (siblings.length) this.add(at(path, '$ref'), '$ref', `cannot be combined with ${siblings.join(', ')} (XGrammar ignores them)`);
      const target = typeof ref === 'string' ? this.resolve(ref) : undefined;
      if (target === undefined) {
        this.add(
          at(path, '$ref'),
          '$ref',
          `${JSON.stringify(ref)} must be "#", "#/$defs/<name>" or "#/definitions/<name>" naming a schema of this document`,
        );
      } else {
        this.targets.set(ref as string, target);
      }
    }
  }

  private resolve(ref: string): unknown {
    if (ref === '#') return this.root;
    const m = /^#\/(\$defs|definitions)\/([^/~]+)$/.exec(ref);
    if (!m || !isObject(this.root)) return undefined;
    const defs = this.root[m[1]!];
    return isObject(defs) && Object.hasOwn(defs, m[2]!) ? defs[m[2]!] : undefined;
  }

  private values(node: Json, path: string, types: Set<string> | undefined): void {
    for (const key of ['enum', 'const'] as const) {
      if (!(key in node)) continue;
      const values = key === 'enum' ? node.enum : [node.const];
      if (!Array.isArray(values) || values.length === 0) {
        this.add(at(path, key), key, 'must be a non-empty list');
        continue;
      }
      if (values.length > MAX_ENUM_VALUES)
        this.add(at(path, key), key, `has ${values.length} values; at most ${MAX_ENUM_VALUES} are accepted`);
      const siblings = Object.keys(node).filter((k) => k !== key && k !== 'type' && !ANNOTATIONS.has(k));
      if (siblings.length)
        this.add(
          at(path, key),
          key,
          `cannot be combined with ${siblings.join(', ')} (XGrammar ignores them); list only the values that satisfy them`,
        );
      values.forEach((v, i) => {
        const where = key === 'enum' ? `${at(path, key)}[${i}]` : at(path, key);
        const problem = jsonProblem(v, 0);
        if (problem) this.add(where, key, `value ${problem}`);
        else if (types && !types.has(jsonType(v)) && !(jsonType(v) === 'integer' && types.has('number'))) {
          this.add(where, key, `value ${JSON.stringify(v)} is not of type ${[...types].join(' or ')}`);
        }
      });
    }
  }

  private objectKeywords(node: Json, path: string): void {
    const props = node.properties;
    if ('properties' in node) {
      if (!isObject(props)) this.add(at(path, 'properties'), 'properties', 'must be an object of schemas');
      else {
        for (const [name, sub] of Object.entries(props)) {
          // XGrammar 0.1.27 does not escape member names in its grammar: '"' and a backslash abort, a tab
          // can never be written.
          if ([...name].some((ch) => ch === '"' || ch === '\\' || ch.charCodeAt(0) < 0x20))
            this.add(
              at(at(path, 'properties'), name),
              'properties',
              `name ${JSON.stringify(name)} must not contain '"', '\\' or control characters`,
            );
          else this.visit(sub, at(at(path, 'properties'), name), 'other');
        }
      }
    }
    if ('required' in node) {
      const req = node.required;
      if (!Array.isArray(req) || req.some((r) => typeof r !== 'string') || new Set(req).size !== req.length) {
        this.add(at(path, 'required'), 'required', 'must be a list of distinct property names');
      } else {
        const missing = req.filter((r) => !isObject(props) || !Object.hasOwn(props, r as string));
        if (missing.length) {
          this.add(
            at(path, 'required'),
            'required',
            `names ${missing.map((m) => JSON.stringify(m)).join(', ')}, which properties does not declare (undeclared members are never written)`,
          );
        }
      }
    }
    if ('additionalProperties' in node) {
      const ap = node.additionalProperties;
      if (ap !== false && isObject(props) && Object.keys(props).length > 0) {
        this.add(
          at(path, 'additionalProperties'),
          'additionalProperties',
          'must be false when properties are declared (XGrammar would let a declared name repeat as an extra member)',
        );
      }
      this.visit(ap, at(path, 'additionalProperties'), 'additionalProperties');
    }
  }

  private arrayKeywords(node: Json, path: string, types: Set<string> | undefined): void {
    // Strict mode writes no items past prefixItems unless `items` allows them (XGrammar aborts on a
    // minItems it cannot reach).
    const numPrefix = Array.isArray(node.prefixItems) ? node.prefixItems.length : 0;
    const closed = !('items' in node) || node.items === false;
    if (types?.has('array') && closed && typeof node.minItems === 'number' && node.minItems > numPrefix) {
      this.add(
        at(path, 'minItems'),
        'minItems',
        `${node.minItems} cannot be met: only ${numPrefix} item(s) are declared (give items a schema)`,
      );
    }
    if (typeof node.maxItems === 'number' && node.maxItems < numPrefix) {
      this.add(at(path, 'maxItems'), 'maxItems', `${node.maxItems} is below the ${numPrefix} prefixItems`);
    }
    if ('items' in node) {
      if (Array.isArray(node.items))
        this.add(at(path, 'items'), 'items', 'as a list (the old tuple form) is not supported; use prefixItems');
      else this.visit(node.items, at(path, 'items'), 'items');
    }
    if ('prefixItems' in node) {
      if (!Array.isArray(node.prefixItems) || node.prefixItems.length === 0) {
        this.add(at(path, 'prefixItems'), 'prefixItems', 'must be a non-empty list of schemas');
      } else {
        node.prefixItems.forEach((s, i) => {
          this.visit(s, `${at(path, 'prefixItems')}[${i}]`, 'other');
        });
      }
    }
  }

  /** Keywords of one type beside a `type` that does not include it: they would do nothing, so they are refused. */
  private misplaced(node: Json, path: string, types: Set<string> | undefined): Set<string> {
    const out = new Set<string>();
    if (!types) return out;
    for (const [k, t] of Object.entries(KEYWORD_TYPE)) {
      if (!(k in node) || t.some((x) => types.has(x))) continue;
      this.add(at(path, k), k, `does nothing beside type ${[...types].join(' / ')}; remove it`);
      out.add(k);
    }
    return out;
  }

  private lengthKeywords(node: Json, path: string, types: Set<string> | undefined, minKey: string, maxKey: string, type: string): void {
    const present = [minKey, maxKey].filter((k) => k in node);
    if (!present.length) return;
    if (!types) {
      for (const k of present) this.add(at(path, k), k, `needs type "${type}" beside it (XGrammar ignores it without one)`);
      return;
    }
    for (const k of present) {
      const v = node[k];
      const bound = type === 'string' ? MAX_STRING_LENGTH : MAX_ITEMS;
      if (!Number.isSafeInteger(v) || (v as number) < 0) this.add(at(path, k), k, 'must be a non-negative integer');
      else if ((v as number) > bound) {
        const why = type === 'string' ? ' (XGrammar compiles every character of a length bound on its own: about 15 ms each)' : '';
        this.add(at(path, k), k, `${v} is above ${bound}, the largest accepted${why}; validate the parsed answer instead`);
      }
    }
    if (typeof node[minKey] === 'number' && typeof node[maxKey] === 'number' && (node[minKey] as number) > (node[maxKey] as number)) {
      this.add(at(path, minKey), minKey, `${node[minKey]} is above ${maxKey} ${node[maxKey]}: no value fits`);
    }
  }

  private numberKeywords(node: Json, path: string, types: Set<string> | undefined): void {
    const keys = ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum'].filter((k) => k in node);
    if (!keys.length) return;
    const bad = keys.filter((k) => typeof node[k] !== 'number');
    if (bad.length) {
      for (const k of bad) this.add(at(path, k), k, 'must be a number');
      return;
    }
    if (node.type !== 'integer') {
      const where = types?.has('number')
        ? 'on type "number" is not enforced by XGrammar 0.1.27 (maximum 10 accepts 10.5)'
        : 'needs type "integer" (alone) beside it';
      for (const k of keys) this.add(at(path, k), k, where);
      return;
    }
    const bounds = integerBounds(node);
    if (bounds.kind === 'refused') this.add(at(path, keys[0]!), keys.join('/'), bounds.reason);
  }

  /**
   * Every subschema must match some finite value: one that cannot ({"$ref": "#"} alone, an object that
   * requires itself) leaves the model no token to write. A least fixpoint over all subschemas.
   */
  checkFinite(): void {
    const nodes: Json[] = [];
    const seen = new Set<unknown>();
    const collect = (n: unknown): void => {
      if (!isObject(n) || seen.has(n)) return;
      seen.add(n);
      nodes.push(n);
      for (const c of subschemas(n)) collect(c);
      if (typeof n.$ref === 'string') collect(this.targets.get(n.$ref));
    };
    collect(this.root);
    const finite = new Set<unknown>();
    const ok = (n: unknown): boolean => n === true || (n !== false && finite.has(n));
    for (let changed = true; changed; ) {
      changed = false;
      for (const n of nodes) {
        if (finite.has(n) || !canEnd(n, ok, this.targets)) continue;
        finite.add(n);
        changed = true;
      }
    }
    for (const n of nodes) {
      if (!finite.has(n)) {
        this.add('$', 'schema', 'has a part no finite value can match (it requires itself, through $ref); give the recursion a way out');
        return;
      }
    }
  }

  /**
   * A subschema must not reach itself through $ref, anyOf and oneOf alone ({"anyOf": [{"$ref": "#"}, ...]}):
   * such a schema says nothing JSON Schema validators can evaluate (they recurse forever). Recursion through
   * a property or an item is fine.
   */
  checkUnguardedCycles(): void {
    const state = new Map<unknown, 'open' | 'done'>();
    const cyclic = (n: unknown): boolean => {
      if (!isObject(n) || state.get(n) === 'done') return false;
      if (state.get(n) === 'open') return true;
      state.set(n, 'open');
      const next: unknown[] = [];
      if (typeof n.$ref === 'string') next.push(this.targets.get(n.$ref));
      for (const k of ['anyOf', 'oneOf']) if (Array.isArray(n[k])) next.push(...(n[k] as unknown[]));
      const found = next.some(cyclic);
      state.set(n, 'done');
      return found;
    };
    const nodes: unknown[] = [this.root, ...this.targets.values()];
    if (nodes.some(cyclic))
      this.add('$', '$ref', 'makes a subschema refer to itself through $ref / anyOf / oneOf alone; recurse through a property or an item');
  }

  /** MAX_DEPTH, counting through $refs; recursive schemas count each cycle once. */
  checkDepth(): void {
    const depthOf = (node: unknown, onStack: Set<unknown>): number => {
      if (!isObject(node) || onStack.has(node)) return 0;
      onStack.add(node);
      let deepest = 0;
      for (const child of subschemas(node)) deepest = Math.max(deepest, depthOf(child, onStack));
      if (typeof node.$ref === 'string') deepest = Math.max(deepest, depthOf(this.targets.get(node.$ref), onStack));
      // An enum (a bounded integer, a length-bounded string of several types) becomes anyOf -> $ref -> const
      // (schema-rewrite.ts): two more levels.
      if (Array.isArray(node.enum) || node.type === 'integer' || 'minLength' in node || 'maxLength' in node) deepest = Math.max(deepest, 2);
      onStack.delete(node);
      return deepest + 1;
    };
    const depth = depthOf(this.root, new Set());
    if (depth > MAX_DEPTH)
      this.add('$', 'schema', `is nested ${depth} levels deep (enums count 2 more, $refs are followed); at most ${MAX_DEPTH} are accepted`);
  }
}

/** The types each type-specific keyword applies to. */
const KEYWORD_TYPE: Record<string, string[]> = {
  properties: ['object'],
  required: ['object'],
  additionalProperties: ['object'],
  items: ['array'],
  prefixItems: ['array'],
  minItems: ['array'],
  maxItems: ['array'],
  minLength: ['string'],
  maxLength: ['string'],
  minimum: ['integer', 'number'],
  maximum: ['integer', 'number'],
  exclusiveMinimum: ['integer', 'number'],
  exclusiveMaximum: ['integer', 'number'],
};

const KNOWN = new Set([
  'type',
  'properties',
  'required',
  'additionalProperties',
  'items',
  'prefixItems',
  'minItems',
  'maxItems',
  'minLength',
  'maxLength',
  'enum',
  'const',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'anyOf',
  'oneOf',
  '$ref',
  '$defs',
  'definitions',
]);

/** The subschemas directly inside `node` ($defs left out: they are reached through $ref). */
function subschemas(node: Json): unknown[] {
  const out: unknown[] = [];
  if (isObject(node.properties)) out.push(...Object.values(node.properties));
  for (const k of ['items', 'additionalProperties']) if (k in node) out.push(node[k]);
  for (const k of ['prefixItems', 'anyOf', 'oneOf']) if (Array.isArray(node[k])) out.push(...(node[k] as unknown[]));
  return out;
}

/** Whether `n` matches some finite value, given which subschemas do (`ok`). */
function canEnd(n: Json, ok: (s: unknown) => boolean, targets: Map<string, unknown>): boolean {
  if (typeof n.$ref === 'string') return ok(targets.get(n.$ref));
  for (const k of ['anyOf', 'oneOf']) if (Array.isArray(n[k]) && !(n[k] as unknown[]).some(ok)) return false;
  if ('enum' in n || 'const' in n) return true;
  const props = isObject(n.properties) ? n.properties : {};
  const required = Array.isArray(n.required) ? (n.required as string[]) : [];
  if (!required.every((r) => ok(props[r]))) return false;
  const prefix = Array.isArray(n.prefixItems) ? (n.prefixItems as unknown[]) : [];
  const minItems = typeof n.minItems === 'number' ? n.minItems : 0;
  // Only the items that must be written count: the prefix up to minItems, then `items` beyond it.
  if (!prefix.slice(0, minItems).every(ok)) return false;
  return minItems <= prefix.length || ok(n.items);
}

/** Whether oneOf's branches can never match the same value: each declares its types, pairwise disjoint. */
function disjointBranches(branches: unknown[]): boolean {
  const seen = new Set<string>();
  for (const b of branches) {
    const types = branchTypes(b);
    if (!types) return false;
    for (const t of types) {
      if (seen.has(t)) return false;
      seen.add(t);
    }
  }
  return true;
}

/** The JSON types a branch allows, integer counted as number; undefined when it does not say. */
function branchTypes(b: unknown): Set<string> | undefined {
  if (!isObject(b)) return undefined;
  let list: unknown[];
  if ('type' in b) list = Array.isArray(b.type) ? b.type : [b.type];
  else if ('const' in b) list = [jsonType(b.const)];
  else if (Array.isArray(b.enum)) list = b.enum.map(jsonType);
  else return undefined;
  return new Set(list.map((t) => (t === 'integer' ? 'number' : String(t))));
}

function jsonType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

/** Why `v` is not plain JSON (undefined when it is). */
function jsonProblem(v: unknown, depth: number): string | undefined {
  if (depth > MAX_DEPTH) return 'is nested too deeply';
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return undefined;
  if (typeof v === 'number') return Number.isFinite(v) ? undefined : `${v} is not a finite number`;
  if (Array.isArray(v)) return v.map((x) => jsonProblem(x, depth + 1)).find(Boolean);
  if (isObject(v))
    return Object.values(v)
      .map((x) => jsonProblem(x, depth + 1))
      .find(Boolean);
  return `is a ${typeof v}, which has no JSON form`;
}

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function describe(v: unknown): string {
  if (Array.isArray(v)) return 'a list';
  return v === null ? 'null' : `a ${typeof v}`;
}

/** `$.properties.name`, or `$.properties["odd name"]` when the key is not an identifier. */
function at(path: string, key: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
}

/** Path segments: a cheap bound on structural nesting while walking (checkDepth is exact). */
function pathDepth(path: string): number {
  return path.split(/\.|\[/).length - 1;
}
