// load-xgrammar.ts: XGrammar (@mlc-ai/web-xgrammar 0.1.27, C++ compiled to WebAssembly) loaded at first use,
// once per page or process. It is 1.1 MB of JavaScript with the wasm inlined, so it is imported dynamically
// and only when a request asks for response_format json_object / json_schema; bundlers put it in its own
// chunk.
//
// How the package loads (read from its bundled code):
//   - it is a UMD bundle in a "type": "module" package. Evaluated as ESM (Node) it has no exports and puts its
//     API on globalThis.xgrammar; Vite (its build and its dev server's pre-bundling alike) wraps it as
//     CommonJS, which gives the API as the default export and sets no global. Both are accepted below.
//   - its emscripten glue, on Node only, calls the globals `require('url')` and `__filename` while it is
//     evaluated and while its WebAssembly is instantiated, neither of which exists in an ES module. So in Node
//     (only there, and only those that are absent) they are defined for the duration of the load, the
//     WebAssembly is instantiated at once, and the ones added are deleted again. Afterwards the glue keeps its
//     own require and never reads those globals. In a browser nothing global is added (the glue tests for
//     Node with `process.versions.node`), and the glue's `await import('module')` sits in a branch that
//     only Node takes.
//
// The glue writes XGrammar's errors ("[FATAL] file:line: message") to a console.error it binds when the
// WebAssembly starts; load() puts recordErrors in place for that moment, so those lines become the messages
// of Tessera's errors rather than console noise.
//
// The one module-level variable, `loading`, is the load memoised: the WebAssembly instance is process-wide
// anyway (the package keeps it in a closure). A failed load is forgotten, so a later request tries again.
//
// A WebAssembly abort (emscripten's abort(): XGrammar met an error it does not recover from) does not unwind
// the wasm stack: measured with 0.1.27, 12 to 58 aborts, or a single one 60 schema levels deep, leave the
// instance answering "memory access out of bounds" for every later call. So after the first abort the
// instance is marked damaged (`XGrammarModule.damage`) and every later call is refused (GrammarLoadError)
// rather than trusted; src/grammar/schema-check.ts refuses what is known to abort before it gets here.

import type * as XGrammarPackage from '@mlc-ai/web-xgrammar';
import { GrammarLoadError } from '../errors';

/** The classes of @mlc-ai/web-xgrammar that Tessera uses. */
type XGrammar = Pick<
  typeof XGrammarPackage,
  'TokenizerInfo' | 'GrammarCompiler' | 'GrammarMatcher' | 'Grammar' | 'CompiledGrammar' | 'Testings'
>;

/** The loaded package and the state of its one WebAssembly instance. */
export interface XGrammarModule {
  readonly api: XGrammar;
  /** Set when the WebAssembly aborted: what was running. From then on it is not used again. */
  damage: string | undefined;
  /** XGrammar's message for the last failed call (its '[FATAL] file:line: message' line, less file:line). */
  lastError: string | undefined;
}

let loading: Promise<XGrammarModule> | undefined;

/** The XGrammar module, loaded on first call (GrammarLoadError when it cannot be). */
export function loadXGrammar(): Promise<XGrammarModule> {
  loading ??= load().catch((e: unknown) => {
    loading = undefined;
    throw e;
  });
  return loading;
}

/**
 * Runs `fn` (a call into XGrammar's WebAssembly) unless the instance is damaged; an abort inside marks it
 * damaged. `what` names the work for later messages ("compiling a json_schema grammar").
 */
export function callXGrammar<T>(xg: XGrammarModule, what: string, fn: () => T): T {
  refuseIfDamaged(xg);
  try {
    return fn();
  } catch (e) {
    noteAbort(xg, what, e);
    throw e;
  }
}

/** callXGrammar for XGrammar's async methods (async only to instantiate the WebAssembly on first use). */
export async function callXGrammarAsync<T>(xg: XGrammarModule, what: string, fn: () => Promise<T>): Promise<T> {
  refuseIfDamaged(xg);
  try {
    return await fn();
  } catch (e) {
    noteAbort(xg, what, e);
    throw e;
  }
}

function refuseIfDamaged(xg: XGrammarModule): void {
  xg.lastError = undefined;
  if (xg.damage === undefined) return;
  throw new GrammarLoadError(
    `XGrammar's WebAssembly aborted earlier (while ${xg.damage}) and is not used again, because an abort can leave its memory damaged`,
    'reload the page or restart the process to get a fresh instance; requests without response_format are unaffected.',
  );
}

/** An abort (a RuntimeError), or a C++ exception the glue rethrew as a bare pointer: both skip the wasm's unwinding. */
function noteAbort(xg: XGrammarModule, what: string, e: unknown): void {
  if (e instanceof WebAssembly.RuntimeError || typeof e === 'number') xg.damage ??= what;
}

/**
 * What XGrammar said about a failure: the error line it wrote just before (its own message, e.g.
 * "minItems is greater than maxItems: 3 > 2"), else what it threw.
 */
export function xgrammarMessage(e: unknown, xg?: XGrammarModule): string {
  if (xg?.lastError) return xg.lastError;
  return e instanceof Error ? `${e.name}: ${e.message}` : String(e);
}

function isNode(): boolean {
  const p = (globalThis as { process?: { versions?: { node?: unknown } } }).process;
  return typeof p?.versions?.node === 'string';
}

type ShimName = 'require' | '__filename';

/** Defines the CommonJS globals the glue reads on Node (those absent only); returns the names it added. */
function addNodeShims(): ShimName[] {
  const proc = (globalThis as unknown as { process: { getBuiltinModule?: (id: string) => unknown; cwd: () => string } }).process;
  if (typeof proc.getBuiltinModule !== 'function') {
    throw new GrammarLoadError(
      'this Node.js has no process.getBuiltinModule, which loading XGrammar needs',
      'use Node.js 20.19 or later (the version Tessera requires).',
    );
  }
  const { createRequire } = proc.getBuiltinModule('node:module') as typeof import('node:module');
  const { fileURLToPath } = proc.getBuiltinModule('node:url') as typeof import('node:url');
  const here = import.meta.url.startsWith('file:') ? fileURLToPath(import.meta.url) : `${proc.cwd()}/tessera.js`;
  const require = createRequire(here);
  let file = here;
  try {
    file = require.resolve('@mlc-ai/web-xgrammar');
  } catch {
    // the glue only derives its directory from the path; the inlined wasm is never read from a file
  }
  const values: Record<ShimName, unknown> = { require, __filename: file };
  const g = globalThis as Record<string, unknown>;
  const added: ShimName[] = [];
  for (const name of Object.keys(values) as ShimName[]) {
    if (g[name] !== undefined) continue;
    g[name] = values[name];
    added.push(name);
  }
  return added;
}

/** The API from the import's exports, its default export, or globalThis.xgrammar (see the file header). */
function pickApi(candidates: unknown[]): XGrammar | undefined {
  for (const c of candidates) {
    const api = c as Partial<XGrammar> | undefined;
    if (api?.TokenizerInfo && api.GrammarCompiler && api.GrammarMatcher && api.Grammar) return api as XGrammar;
  }
  return undefined;
}

/**
 * XGrammar's stderr: "[FATAL] file:line: message" precedes a failed check and "Aborted()" the abort that
 * follows; both become the error's message instead of console noise. Other lines go to `forward`.
 */
function recordErrors(xg: XGrammarModule, forward: (...args: unknown[]) => void): (...args: unknown[]) => void {
  return (...args: unknown[]) => {
    const line = args.map(String).join(' ');
    if (/^\[FATAL\]/.test(line)) xg.lastError = line.replace(/^\[FATAL\]\s*\S*:\d+:\s*/, '');
    else if (!/^Aborted\(/.test(line)) forward(...args);
  };
}

async function load(): Promise<XGrammarModule> {
  const added = isNode() ? addNodeShims() : [];
  try {
    let mod: unknown;
    try {
      mod = await import('@mlc-ai/web-xgrammar');
    } catch (e) {
      throw new GrammarLoadError(
        `importing @mlc-ai/web-xgrammar failed (${xgrammarMessage(e)})`,
        'check that the package is installed (it is a dependency of Tessera) and, in a browser, that the chunk your bundler made for it is served.',
        { cause: e },
      );
    }
    const api = pickApi([mod, (mod as { default?: unknown } | undefined)?.default, (globalThis as { xgrammar?: unknown }).xgrammar]);
    if (!api) {
      throw new GrammarLoadError(
        '@mlc-ai/web-xgrammar loaded but exposed neither exports nor globalThis.xgrammar (an AMD loader on the page takes its UMD bundle)',
        'load Tessera in a page without an AMD define(), or report your bundler setup.',
      );
    }
    const xg: XGrammarModule = { api, damage: undefined, lastError: undefined };
    // The glue binds console.error as its stderr when the WebAssembly is instantiated (just below), so the
    // function in place then receives every line XGrammar writes from now on: recordErrors keeps its error
    // lines (raised again as SchemaCompileError) and passes the rest on.
    const consoleError = console.error;
    console.error = recordErrors(xg, consoleError);
    try {
      // Instantiates the WebAssembly now, while the Node shims exist, and proves it works.
      (await api.Grammar.builtinJSONGrammar()).dispose();
    } catch (e) {
      throw new GrammarLoadError(
        `XGrammar's WebAssembly did not start (${xgrammarMessage(e)})`,
        'the page or process may lack WebAssembly support or memory; requests without response_format are unaffected.',
        { cause: e },
      );
    } finally {
      console.error = consoleError;
    }
    return xg;
  } finally {
    for (const name of added) delete (globalThis as Record<string, unknown>)[name];
  }
}
