// What the code and the README cite must be in the repository: no "issue N" (the tracker is not shipped),
// no paths outside it (the sibling shared folder), and every "docs/design.md invariant N" names an
// invariant that docs/design.md numbers. The product (src, shaders, workers) and everything beside it
// (bench, scripts, demo, test) are checked alike.

import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '../..');
const SOURCE_DIRS = ['src', 'shaders', 'workers', 'bench', 'scripts', 'demo', 'test'];

function sourceFiles(): string[] {
  return SOURCE_DIRS.flatMap((d) =>
    readdirSync(join(root, d), { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile() && /\.(ts|wgsl|html|mjs|py)$/.test(e.name) && !e.parentPath.includes('node_modules'))
      .map((e) => join(e.parentPath, e.name)),
  );
}

function hits(pattern: RegExp, files: string[]): string[] {
  return files.flatMap((f) =>
    readFileSync(f, 'utf8')
      .split('\n')
      .flatMap((line, i) => (pattern.test(line) ? [`${f.slice(root.length + 1)}:${i + 1}: ${line.trim()}`] : [])),
  );
}

describe('references in the code and the README', () => {
  const files = [...sourceFiles(), join(root, 'README.md')];

  it('cite no issue numbers and no paths outside the repository', () => {
    expect(files.length).toBeGreaterThan(100);
    expect(hits(/\bissue [0-9]|shared\//i, files)).toEqual([]);
  });

  it('cite only invariants docs/design.md numbers', () => {
    const design = readFileSync(join(root, 'docs/design.md'), 'utf8');
    const numbered = new Set([...design.matchAll(/^(\d+)\. \*\*/gm)].map((m) => Number(m[1])));
    expect(numbered.size).toBeGreaterThanOrEqual(8);
    const cited = files.flatMap((f) =>
      [...readFileSync(f, 'utf8').matchAll(/docs\/design\.md invariants? (\d+)(?: and (\d+))?/g)].flatMap((m) =>
        [m[1], m[2]].filter(Boolean).map(Number),
      ),
    );
    expect(cited.length).toBeGreaterThan(10);
    expect(cited.filter((n) => !numbered.has(n))).toEqual([]);
  });
});
