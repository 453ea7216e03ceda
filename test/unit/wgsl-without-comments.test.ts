// The package build ships every shader without its comments (scripts/wgsl-without-comments.ts): nothing
// but comments, blank lines and indentation may go.

import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { wgslWithoutComments } from '../../scripts/wgsl-without-comments';

const SHADERS = resolve(import.meta.dirname, '../../shaders');
const files = [...readdirSync(SHADERS).filter((f) => f.endsWith('.wgsl')), ...readdirSync(join(SHADERS, 'lib')).map((f) => `lib/${f}`)];

/** The source's tokens outside comments, written the way the stripped text must have them. */
function codeTokens(source: string): string[] {
  const code = source.replace(/\/\*[\s\S]*?\*\//g, ' ').replace(/\/\/[^\n]*/g, ' ');
  return code.split(/\s+/).filter((t) => t !== '');
}

describe('shaders without comments', () => {
  it('covers every shader file', () => expect(files.length).toBeGreaterThan(40));
  for (const f of files) {
    it(f, () => {
      const source = readFileSync(join(SHADERS, f), 'utf8');
      const stripped = wgslWithoutComments(source);
      expect(stripped).not.toMatch(/\/\/|\/\*/);
      expect(stripped.split('\n').every((line) => line.trim() !== '')).toBe(true);
      expect(codeTokens(stripped)).toEqual(codeTokens(source));
    });
  }
  it('drops line and block comments, keeps code on the same line', () => {
    expect(wgslWithoutComments('// head\nconst A: u32 = 1u; // one\n\n/** doc\n   more */\nfn f() {\n  let b = 2u;\n}\n')).toBe(
      'const A: u32 = 1u;\nfn f() {\nlet b = 2u;\n}',
    );
  });
});
