// A JSON Schema validator for the subset response_format accepts (src/grammar/schema-check.ts), written
// from the JSON Schema 2020-12 text, independent of XGrammar: the grammar tests check that what the grammar
// lets a model write validates here. Returns the failures as '<path>: <why>' (empty: valid).

type Json = Record<string, unknown>;

export function validate(value: unknown, schema: unknown, root: unknown = schema, path = '$'): string[] {
  if (schema === true) return [];
  if (schema === false) return [`${path}: no value is allowed`];
  const s = schema as Json;
  const out: string[] = [];
  const fail = (why: string) => out.push(`${path}: ${why}`);
  if (typeof s.$ref === 'string') return validate(value, resolve(s.$ref, root), root, path);
  if ('type' in s) {
    const types = Array.isArray(s.type) ? (s.type as string[]) : [s.type as string];
    if (!types.some((t) => hasType(value, t))) fail(`${JSON.stringify(value)} is not of type ${types.join('/')}`);
  }
  if (Array.isArray(s.enum) && !s.enum.some((e) => equal(e, value))) fail(`${JSON.stringify(value)} is not in the enum`);
  if ('const' in s && !equal(s.const, value)) fail(`${JSON.stringify(value)} is not the const`);
  if (Array.isArray(s.anyOf) && !s.anyOf.some((b) => validate(value, b, root, path).length === 0)) fail('no anyOf branch matches');
  if (Array.isArray(s.oneOf) && s.oneOf.filter((b) => validate(value, b, root, path).length === 0).length !== 1)
    fail('not exactly one oneOf branch matches');
  if (typeof value === 'string') {
    const n = [...value].length;
    if (typeof s.minLength === 'number' && n < s.minLength) fail(`shorter than ${s.minLength}`);
    if (typeof s.maxLength === 'number' && n > s.maxLength) fail(`longer than ${s.maxLength}`);
  }
  if (typeof value === 'number') {
    if (typeof s.minimum === 'number' && value < s.minimum) fail(`${value} < minimum ${s.minimum}`);
    if (typeof s.maximum === 'number' && value > s.maximum) fail(`${value} > maximum ${s.maximum}`);
    if (typeof s.exclusiveMinimum === 'number' && value <= s.exclusiveMinimum) fail(`${value} <= exclusiveMinimum`);
    if (typeof s.exclusiveMaximum === 'number' && value >= s.exclusiveMaximum) fail(`${value} >= exclusiveMaximum`);
  }
  if (Array.isArray(value)) {
    if (typeof s.minItems === 'number' && value.length < s.minItems) fail(`fewer than ${s.minItems} items`);
    if (typeof s.maxItems === 'number' && value.length > s.maxItems) fail(`more than ${s.maxItems} items`);
    const prefix = Array.isArray(s.prefixItems) ? s.prefixItems : [];
    value.forEach((v, i) => {
      const sub = i < prefix.length ? prefix[i] : s.items;
      if (sub !== undefined) out.push(...validate(v, sub, root, `${path}[${i}]`));
    });
  }
  if (isObject(value)) {
    const props = isObject(s.properties) ? s.properties : {};
    for (const r of Array.isArray(s.required) ? (s.required as string[]) : []) if (!Object.hasOwn(value, r)) fail(`missing ${r}`);
    for (const [k, v] of Object.entries(value)) {
      if (Object.hasOwn(props, k)) out.push(...validate(v, props[k], root, `${path}.${k}`));
      else if ('additionalProperties' in s) out.push(...validate(v, s.additionalProperties, root, `${path}.${k}`));
    }
  }
  return out;
}

function resolve(ref: string, root: unknown): unknown {
  if (ref === '#') return root;
  const [, defs, name] = /^#\/(\$defs|definitions)\/(.+)$/.exec(ref) ?? [];
  const target = defs && name ? ((root as Json)[defs] as Json | undefined)?.[name] : undefined;
  if (target === undefined) throw new Error(`unresolvable $ref ${ref}`);
  return target;
}

function hasType(v: unknown, t: string): boolean {
  switch (t) {
    case 'null':
      return v === null;
    case 'boolean':
      return typeof v === 'boolean';
    case 'integer':
      return Number.isInteger(v);
    case 'number':
      return typeof v === 'number';
    case 'string':
      return typeof v === 'string';
    case 'array':
      return Array.isArray(v);
    case 'object':
      return isObject(v);
    default:
      throw new Error(`unknown type ${t}`);
  }
}

function equal(a: unknown, b: unknown): boolean {
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => equal(x, b[i]));
  if (isObject(a) && isObject(b)) {
    const ka = Object.keys(a);
    return ka.length === Object.keys(b).length && ka.every((k) => Object.hasOwn(b, k) && equal(a[k], b[k]));
  }
  return a === b;
}

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
