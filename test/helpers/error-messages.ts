// The text of every error message written in src/: the string and template literals passed to
// `new SomethingError(...)` and to `super(...)` (error classes build their messages there), including
// module-level constants passed by name. Template expressions read as '…'. Used by the error-hint test to
// find every option a hint names.

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

/**
 * The literal text inside an expression: string literals, template quasis, '+' concatenations, constants.
 * A constant is read once per path (`reading`), so one whose value names itself (a function reading a
 * property of the same name) ends.
 */
function literalText(n: Node, consts: Map<string, Node>, reading: ReadonlySet<string> = new Set()): string {
  if (n.type === 'Literal') return typeof n.value === 'string' ? n.value : '';
  if (n.type === 'Identifier') {
    const name = n.name as string;
    const init = reading.has(name) ? undefined : consts.get(name);
    return init ? literalText(init, consts, new Set([...reading, name])) : '';
  }
  if (n.type === 'TemplateLiteral') {
    const quasis = n.quasis as Array<{ value: { cooked: string } }>;
    const exprs = n.expressions as Node[];
    return quasis.map((q, i) => q.value.cooked + (i < exprs.length ? literalText(exprs[i], consts, reading) || '…' : '')).join('');
  }
  return children(n)
    .map((c) => literalText(c, consts, reading))
    .join('');
}

/** Module-level `const NAME = ...` declarations, so a message passed by name is read too. */
function moduleConstants(program: Node): Map<string, Node> {
  const consts = new Map<string, Node>();
  for (const stmt of program.body as Node[]) {
    const decl = stmt.type === 'ExportNamedDeclaration' ? (stmt.declaration as Node | null) : stmt;
    if (decl?.type !== 'VariableDeclaration' || decl.kind !== 'const') continue;
    for (const d of decl.declarations as Node[]) {
      const id = d.id as Node;
      if (id.type === 'Identifier' && d.init) consts.set(id.name as string, d.init as Node);
    }
  }
  return consts;
}

function collect(n: Node, file: string, consts: Map<string, Node>, out: ErrorMessage[]): void {
  const callee = n.callee as Node | undefined;
  const isErrorConstruction = n.type === 'NewExpression' && callee?.type === 'Identifier' && /Error$/.test(callee.name as string);
  const isSuperCall = n.type === 'CallExpression' && callee?.type === 'Super';
  if (isErrorConstruction || isSuperCall) {
    const text = (n.arguments as Node[])
      .map((a) => literalText(a, consts))
      .join(' ')
      .trim();
    if (text) out.push({ file, text });
  }
  for (const c of children(n)) collect(c, file, consts, out);
}

export function errorMessagesIn(root: string, dir = 'src'): ErrorMessage[] {
  const out: ErrorMessage[] = [];
  for (const path of sourceFiles(join(root, dir))) {
    const program = parseAst(readFileSync(path, 'utf8'), { lang: 'ts' }) as unknown as Node;
    collect(program, relative(root, path), moduleConstants(program), out);
  }
  return out;
}
