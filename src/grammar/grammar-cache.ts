// grammar-cache.ts: the compiled response_format grammars of one model's tokenizer. Holds XGrammar's
// TokenizerInfo (the vocabulary, built once: about 80 ms for SmolVLM's 49,280 tokens) and a GrammarCompiler,
// and keeps each compiled grammar under its key (grammar-source.ts), so a schema asked for twice compiles
// once. Compiles of the same key in flight are shared, and a failed compile is not kept.
//
//   createMatcher(format) -> grammarSource(format)  -> key -> cached grammar, or compile it
//                         -> a ResponseMatcher over it (one per request; the request disposes it)
//
// At most `maxGrammars` grammars are kept; the least recently used one is freed beyond that. A matcher keeps
// the grammar it was made from alive on its own (XGrammar shares it by reference count), so freeing a
// cached grammar never affects running requests.
//
// Ownership: every CompiledGrammar and matcher holds WebAssembly memory that JavaScript's garbage collector
// does not see, so each must be disposed. dispose() frees everything this cache made: its grammars, the
// matchers still open, the compiler and the TokenizerInfo.

import type { CompiledGrammar, GrammarCompiler, GrammarMatcher, TokenizerInfo } from '@mlc-ai/web-xgrammar';
import { GrammarLoadError, InternalError, SchemaCompileError } from '../errors';
import type { TextTokenizer } from '../processor/tokenizer';
import { grammarSource, type GrammarSource, type ResponseFormatSpec } from './grammar-source';
import { callXGrammar, callXGrammarAsync, loadXGrammar, xgrammarMessage, type XGrammarModule } from './load-xgrammar';
import { type CompileInfo, ResponseMatcher } from './response-matcher';
import { createTokenizerInfo, type GrammarVocabulary, grammarVocabulary } from './tokenizer-info';
import { Utf8Guard } from './utf8-guard';

export interface GrammarCacheOptions {
  /** The model's vocab_size (config.json): logits per step, bits per mask. */
  vocabSize: number;
  /** The tokens that end a request (src/processor/stop-tokens.ts). */
  stopTokenIds: readonly number[];
  /** Compiled grammars kept (least recently used freed first); default 32. */
  maxGrammars?: number;
}

interface Compiled {
  grammar: CompiledGrammar;
  compileMs: number;
}

interface Entry {
  promise: Promise<Compiled>;
  /** Set once the compile finished. */
  done?: Compiled;
  /** Matchers being made from it right now: it is not freed until they exist. */
  numPinned: number;
}

/** XGrammar's compact JSON: no whitespace between tokens, ',' and ':' (json-object-grammar.ts says why). */
const ANY_WHITESPACE = false;
const ONE_LINE = -1;
const SEPARATORS: [string, string] = [',', ':'];
/** XGrammar's strict mode: members and items the schema does not declare are never written. */
const STRICT = true;
/**
 * A structural tag's JSON (tool calls' arguments) is written as chat templates' `tojson` writes it, the
 * form the model saw calls in: ', ' and ': ' between members, no other whitespace.
 */
const TEMPLATE_SEPARATORS: [string, string] = [', ', ': '];

export class GrammarCache {
  private readonly entries = new Map<string, Entry>();
  private readonly matchers = new Set<ResponseMatcher>();
  private readonly maxGrammars: number;
  private disposed = false;

  private constructor(
    private readonly xg: XGrammarModule,
    private readonly info: TokenizerInfo,
    private readonly compiler: GrammarCompiler,
    private readonly guard: Utf8Guard,
    readonly vocabSize: number,
    /** Time to build XGrammar's TokenizerInfo, in ms. */
    readonly tokenizerInfoMs: number,
    maxGrammars: number,
  ) {
    this.maxGrammars = maxGrammars;
  }

  /** Loads XGrammar (first call in the page or process) and builds the vocabulary of `tokenizer`. */
  static async create(tokenizer: TextTokenizer, options: GrammarCacheOptions): Promise<GrammarCache> {
    return await GrammarCache.fromVocabulary(grammarVocabulary(tokenizer, options.vocabSize, options.stopTokenIds), options);
  }

  /** Like create, from a vocabulary already built (tokenizer-info.ts); `options` vocabSize and stops are its. */
  static async fromVocabulary(vocab: GrammarVocabulary, options: Pick<GrammarCacheOptions, 'maxGrammars'> = {}): Promise<GrammarCache> {
    const maxGrammars = options.maxGrammars ?? 32;
    if (!Number.isInteger(maxGrammars) || maxGrammars < 1)
      throw new InternalError(`GrammarCache: maxGrammars ${maxGrammars} is not a positive integer`);
    const xg = await loadXGrammar();
    const t0 = performance.now();
    const info = await createTokenizerInfo(xg, vocab);
    const tokenizerInfoMs = performance.now() - t0;
    const guard = Utf8Guard.forVocabulary(vocab.pieces, vocab.vocabType, vocab.vocabSize);
    try {
      // Its own cache off: this class keeps the grammars (and can free them).
      const compiler = await callXGrammarAsync(xg, 'creating a grammar compiler', () =>
        xg.api.GrammarCompiler.createGrammarCompiler(info, false),
      );
      return new GrammarCache(xg, info, compiler, guard, vocab.vocabSize, tokenizerInfoMs, maxGrammars);
    } catch (e) {
      if (xg.damage === undefined) info.dispose();
      throw e;
    }
  }

  /** Grammars held now. */
  get numGrammars(): number {
    return this.entries.size;
  }

  /**
   * Compiles the grammar of `format` unless it is cached. UnsupportedSchemaError when the schema cannot be
   * enforced, SchemaCompileError when XGrammar refuses it.
   */
  async compile(format: ResponseFormatSpec): Promise<CompileInfo> {
    const { info } = await this.grammar(format);
    return info;
  }

  /** A matcher for one request (it must be disposed: see the file header). */
  async createMatcher(format: ResponseFormatSpec): Promise<ResponseMatcher> {
    const { compiled, info, entry } = await this.grammar(format);
    this.checkOpen('createMatcher');
    entry.numPinned++;
    let matcher: GrammarMatcher;
    try {
      matcher = await callXGrammarAsync(this.xg, 'creating a matcher', () => this.xg.api.GrammarMatcher.createGrammarMatcher(compiled));
    } finally {
      entry.numPinned--;
    }
    const m = new ResponseMatcher(this.xg, matcher, this.guard, this.vocabSize, info, (x) => this.matchers.delete(x));
    if (this.disposed) {
      m.dispose();
      this.checkOpen('createMatcher');
    }
    this.matchers.add(m);
    return m;
  }

  /** Frees every grammar and open matcher, the compiler and the TokenizerInfo. Safe to call more than once. */
  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    for (const m of [...this.matchers]) m.dispose();
    const free = this.xg.damage === undefined;
    for (const e of this.entries.values()) if (free) e.done?.grammar.dispose();
    this.entries.clear();
    if (free) {
      this.compiler.dispose();
      this.info.dispose();
    }
  }

  private async grammar(format: ResponseFormatSpec): Promise<{ compiled: CompiledGrammar; info: CompileInfo; entry: Entry }> {
    this.checkOpen('compile');
    const source = grammarSource(format);
    let entry = this.entries.get(source.key);
    const cached = entry !== undefined;
    if (entry) {
      this.entries.delete(source.key); // re-inserted below: most recently used last
    } else {
      const created: Entry = { promise: this.compileSource(source), numPinned: 0 };
      // A failed compile is dropped, so the next request tries again (with the same error, for a bad schema).
      created.promise.then(
        (done) => {
          created.done = done;
          // Disposed between the compile's end and this callback: nothing else will free it.
          if (this.disposed && this.xg.damage === undefined) done.grammar.dispose();
        },
        () => {
          if (this.entries.get(source.key) === created) this.entries.delete(source.key);
        },
      );
      entry = created;
    }
    this.entries.set(source.key, entry);
    this.evict();
    const { grammar, compileMs } = await entry.promise;
    return { compiled: grammar, info: { key: source.key, compileMs, cached }, entry };
  }

  private async compileSource(source: GrammarSource): Promise<Compiled> {
    const what =
      source.kind === 'ebnf'
        ? 'the json_object grammar'
        : source.kind === 'json_schema'
          ? 'response_format.json_schema.schema'
          : 'the tool calls';
    const t0 = performance.now();
    let grammar: CompiledGrammar;
    try {
      grammar = await callXGrammarAsync(this.xg, `compiling ${what}`, () =>
        source.kind === 'ebnf'
          ? this.compiler.compileGrammar(source.ebnf)
          : source.kind === 'json_schema'
            ? this.compiler.compileJSONSchema(source.schemaJson, ANY_WHITESPACE, ONE_LINE, SEPARATORS, STRICT)
            : this.compileStructuralTag(source.json),
      );
    } catch (e) {
      if (e instanceof GrammarLoadError) throw e;
      throw new SchemaCompileError(what, xgrammarMessage(e, this.xg), { cause: e });
    }
    const compileMs = performance.now() - t0;
    if (this.disposed) {
      grammar.dispose();
      this.checkOpen('compile');
    }
    return { grammar, compileMs };
  }

  /**
   * A structural tag, each JSON schema in it first written as an EBNF grammar of one fixed form (XGrammar's
   * own structural-tag schemas allow any whitespace, which a model may then write without end).
   */
  private async compileStructuralTag(json: string): Promise<CompiledGrammar> {
    const schemas: Array<Record<string, unknown>> = [];
    const tag = JSON.parse(json, (_key, v: unknown) => {
      const f = v as { type?: unknown; json_schema?: unknown } | null;
      if (f && typeof f === 'object' && f.type === 'json_schema' && f.json_schema !== undefined) {
        schemas.push(f as Record<string, unknown>);
      }
      return v;
    }) as Record<string, unknown>;
    for (const f of schemas) {
      const ebnf = await this.xg.api.Testings._jsonSchemaToEBNF(
        JSON.stringify(f.json_schema),
        ANY_WHITESPACE,
        ONE_LINE,
        TEMPLATE_SEPARATORS,
        STRICT,
      );
      f.type = 'grammar';
      f.grammar = ebnf;
      delete f.json_schema;
    }
    return await this.compiler.compileStructuralTag(tag);
  }

  /** Frees the least recently used compiled grammars beyond maxGrammars (those compiling or pinned stay). */
  private evict(): void {
    for (const [key, e] of this.entries) {
      if (this.entries.size <= this.maxGrammars) return;
      if (!e.done || e.numPinned > 0) continue;
      this.entries.delete(key);
      const { grammar } = e.done;
      callXGrammar(this.xg, 'freeing a grammar', () => grammar.dispose());
    }
  }

  private checkOpen(what: string): void {
    if (this.disposed) throw new InternalError(`GrammarCache.${what} after dispose()`);
  }
}
