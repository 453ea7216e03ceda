// The text of every error message written in src/: the string and template literals passed to
// `new SomethingError(...)` and to `super(...)` (error classes build their messages there). Template
// expressions read as '…'. Used by the error-hint test to find every option a hint names.

import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parseAst } from 'vite';

export interface ErrorMessage {
  file: string;
  text: string;
}

interface Node {
  type: string;
  [k: string]: unknown;
}

function* sourceFiles(dir: string): Generator<string> {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) yield* sourceFiles(p);
    else if (p.endsWith('.ts') && !p.endsWith('.d.ts')) yield p;
  }
}

function isNode(v: unknown): v is Node {
  return typeof v === 'object' && v !== null && typeof (v as Node).type === 'string';
}

function children(n: Node): Node[] {
  const out: Node[] = [];
  for (const [k, v] of Object.entries(n)) {
    if (k === 'type') continue;
    if (Array.isArray(v)) out.push(...v.filter(isNode));
    else if (isNode(v)) out.push(v);
  }
  return out;
}

/** The literal text inside an expression: string literals, template quasis, '+' concatenations. */
function literalText(n: Node): string {
  if (n.type === 'Literal') return typeof n.value === 'string' ? n.value : '';
  if (n.type === 'TemplateLiteral') {
    const quasis = n.quasis as Array<{ value: { cooked: string } }>;
    const exprs = n.expressions as Node[];
    return quasis.map((q, i) => q.value.cooked + (i < exprs.length ? literalText(exprs[i]) || '…' : '')).join('');
  }
  return children(n).map(literalText).join('');
}

function collect(n: Node, file: string, out: ErrorMessage[]): void {
  const callee = n.callee as Node | undefined;
  const isErrorConstruction = n.type === 'NewExpression' && callee?.type === 'Identifier' && /Error$/.test(callee.name as string);
  const isSuperCall = n.type === 'CallExpression' && callee?.type === 'Super';
  if (isErrorConstruction || isSuperCall) {
    const text = (n.arguments as Node[]).map(literalText).join(' ').trim();
    if (text) out.push({ file, text });
  }
  for (const c of children(n)) collect(c, file, out);
}

export function errorMessagesIn(root: string, dir = 'src'): ErrorMessage[] {
  const out: ErrorMessage[] = [];
  for (const path of sourceFiles(join(root, dir))) {
    collect(parseAst(readFileSync(path, 'utf8'), { lang: 'ts' }) as unknown as Node, relative(root, path), out);
  }
  return out;
}
