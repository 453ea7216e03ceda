// Error hints name real options. A hint names an option as "the request option <path>" (a field of
// chat.completions.create's request) or "the engine option <path>" (a field of createEngine's options,
// browser or Node); each path is checked against the PUBLIC types by compiling one line per mention with
// tsc. A deliberately wrong control mention must fail that compile, so the check itself can fail.

import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { errorMessagesIn } from '../helpers/error-messages';

const root = resolve(import.meta.dirname, '../..');
const messages = errorMessagesIn(root);

const OPTION_MENTION = /\b(request|engine) option ([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)/g;
/** Option-like paths (request `tessera.*`, engine `encoder.*` / `gpu.*`) wherever they appear; not file names. */
const OPTION_LIKE_PATH = /(?<![.\w/-])(?:tessera|encoder|gpu)\.[A-Za-z_]\w*(?![\w.])/g;

interface Mention {
  scope: 'request' | 'engine';
  path: string;
  file: string;
}

function mentions(): Mention[] {
  return messages.flatMap((m) =>
    [...m.text.matchAll(OPTION_MENTION)].map((x) => ({ scope: x[1] as Mention['scope'], path: x[2], file: m.file })),
  );
}

/** tsc errors, one line per mention: `<index>` of each mention that does not name a public option. */
function badMentions(list: Mention[]): { bad: number[]; output: string } {
  mkdirSync(join(root, 'node_modules/.cache'), { recursive: true }); // absent on a fresh install
  const dir = mkdtempSync(join(root, 'node_modules/.cache/tessera-hint-check-'));
  try {
    const lines = [
      `import type { BrowserEngineOptions, ChatCompletionRequest } from '${root}/src/index';`,
      `import type { NodeEngineOptions } from '${root}/src/node';`,
      'type Key<T> = keyof NonNullable<T> & string;',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: TypeScript source for the generated file, not a template
      'type Path<T> = { [K in Key<T>]-?: K | `${K}.${Key<NonNullable<T>[K]>}` }[Key<T>];',
      'type RequestOption = Path<ChatCompletionRequest>;',
      'type EngineOption = Path<BrowserEngineOptions> | Path<NodeEngineOptions>;',
    ];
    const first = lines.length + 1;
    list.forEach((m, i) => {
      lines.push(`export const m${i}: ${m.scope === 'request' ? 'RequestOption' : 'EngineOption'} = '${m.path}';`);
    });
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'mentions.ts'), `${lines.join('\n')}\n`);
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({ extends: join(root, 'tsconfig.json'), include: ['mentions.ts'], compilerOptions: { noEmit: true } }),
    );
    let output = '';
    try {
      execFileSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', dir], { encoding: 'utf8' });
    } catch (e) {
      output = String((e as { stdout?: string }).stdout ?? e);
    }
    const bad = [...output.matchAll(/mentions\.ts\((\d+),\d+\): error/g)].map((x) => Number(x[1]) - first);
    return { bad: [...new Set(bad)].sort((a, b) => a - b), output };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('error hints', () => {
  it('finds the option mentions in the messages (the extraction works)', () => {
    const found = mentions().map((m) => `${m.scope} ${m.path}`);
    // The hints written today; more may be added, none of these may silently stop being found.
    expect(found).toEqual(
      expect.arrayContaining([
        'request max_tokens',
        'engine kvCacheTokens',
        'request tessera.allowReducedResolution',
        'engine encoder.maxBatchTiles',
        'request tessera.encodeTimeoutMs',
        'engine encoder.memoryCacheBytes',
        'engine encoder.persistentCacheBytes',
        'engine encoder.mode',
        'engine encoder.workerScript',
      ]),
    );
  });

  it('writes every option-like path as "the request option ..." or "the engine option ..."', () => {
    const stray = messages.flatMap((m) => {
      const covered = [...m.text.matchAll(OPTION_MENTION)].map((x) => x[2]);
      return [...m.text.matchAll(OPTION_LIKE_PATH)]
        .map((x) => x[0])
        .filter((p) => !covered.includes(p))
        .map((p) => `${m.file}: ${p}`);
    });
    expect(stray).toEqual([]);
  });

  it('names only options that exist in the public option types', () => {
    const list = mentions();
    const control: Mention = { scope: 'request', path: 'tessera.retryReducedResolution', file: '(control)' };
    const { bad, output } = badMentions([...list, control]);
    // The control (an option that does not exist) must be reported, and nothing else.
    expect(bad, output).toEqual([list.length]);
  });
});
