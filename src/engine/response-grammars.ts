// The engine's side of response_format: one GrammarCache (src/grammar/) per engine, made on the first
// request that asks for a format and loaded with XGrammar then, never before (a dynamic import: its 1.1 MB
// stays out of the main bundle), and one matcher per request, which constrains that request's tokens
// (EngineRequest.constraint) and is disposed when the request settles.

import type { GrammarCache } from '../grammar/grammar-cache';
import type { ResponseFormatSpec } from '../grammar/grammar-source';
import type { TextTokenizer } from '../processor/tokenizer';
import type { TokenConstraint } from './engine-request';

export class ResponseGrammars {
  private cache: Promise<GrammarCache> | undefined;
  private destroyed = false;

  constructor(
    private readonly tokenizer: TextTokenizer,
    private readonly vocabSize: number,
    private readonly stopTokenIds: readonly number[],
  ) {}

  /**
   * A matcher for one request's `format` (compiled once per schema). Throws UnsupportedSchemaError or
   * SchemaCompileError for a schema that cannot be enforced, GrammarLoadError when XGrammar cannot load.
   */
  async constraint(format: ResponseFormatSpec): Promise<TokenConstraint> {
    const cache = await this.grammars();
    return cache.createMatcher(format);
  }

  /** The grammar cache (loading XGrammar on the first call). */
  grammars(): Promise<GrammarCache> {
    this.cache ??= import('../grammar/grammar-cache')
      .then(({ GrammarCache }) => GrammarCache.create(this.tokenizer, { vocabSize: this.vocabSize, stopTokenIds: this.stopTokenIds }))
      .then((c) => {
        if (this.destroyed) c.dispose();
        return c;
      });
    // A failed load is not kept: a later request tries again.
    this.cache.catch(() => (this.cache = undefined));
    return this.cache;
  }

  /** Frees every grammar and matcher (requests still running have been failed first). */
  destroy(): void {
    this.destroyed = true;
    void this.cache?.then(
      (c) => c.dispose(),
      () => {},
    );
  }
}
