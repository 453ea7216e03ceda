// response-matcher.ts: one request's grammar state. Each decode step the engine asks for the bitmask of the
// tokens that may come next, masks the logits with it, samples, and tells the matcher the token:
//
//   fillMask(mask) -> logits masked on the GPU -> sample id -> accept(id) -> fillMask(mask) -> ...
//                                                          ... accept(stop id) -> isTerminated
//
// The mask has ceil(vocabSize / 32) Int32 words; bit j of word i set means token 32 i + j is allowed (the
// layout of XGrammar and of src/engine's logit masks). Once the answer is complete the mask allows only the
// stop tokens. dispose() frees the WebAssembly matcher: every matcher must be disposed (GrammarCache.dispose()
// disposes those still open).
//
// fillMask is synchronous, as the engine's step is: XGrammar's getNextTokenBitmask() is async only to
// instantiate its WebAssembly on first use, and computes the mask synchronously inside. The same binding
// method is called here directly (the matcher's `handle`), and the std::vector it returns is copied out
// word by word: about 0.25 ms for SmolVLM's 1540 words, measured warm in Node. The mask then loses the
// tokens that would make the answer invalid UTF-8 (utf8-guard.ts).

import type { GrammarMatcher } from '@mlc-ai/web-xgrammar';
import { InternalError } from '../errors';
import { callXGrammar, type XGrammarModule } from './load-xgrammar';
import { UTF8_BOUNDARY, type Utf8Guard } from './utf8-guard';

/** How a grammar was compiled: for benchmarks and logs. */
export interface CompileInfo {
  /** The cache key (grammar-source.ts). */
  key: string;
  /** Time XGrammar took to compile it (of the compile that made it, when it came from the cache). */
  compileMs: number;
  /** Whether this request found it compiled already. */
  cached: boolean;
}

/** The embind objects behind GrammarMatcher (0.1.27): its handle and the std::vector<int32_t> of a mask. */
interface MatcherHandle {
  GetNextTokenBitmask(vocabSize: number): { size(): number; get(i: number): number; delete(): void };
}

export class ResponseMatcher {
  /** Bits (logits) in a mask: the model's vocab_size. */
  readonly vocabSize: number;
  /** Int32 words in a mask: ceil(vocabSize / 32). */
  readonly maskWords: number;
  private numAccepted = 0;
  private disposed = false;
  /** Where the answer's bytes stand in UTF-8 (utf8-guard.ts). */
  private utf8State = UTF8_BOUNDARY;

  /** Made by GrammarCache.createMatcher; `onDispose` lets the cache forget it. */
  constructor(
    private readonly xg: XGrammarModule,
    private readonly matcher: GrammarMatcher,
    private readonly guard: Utf8Guard,
    vocabSize: number,
    readonly compile: CompileInfo,
    private readonly onDispose: (m: ResponseMatcher) => void,
  ) {
    this.vocabSize = vocabSize;
    this.maskWords = Math.ceil(vocabSize / 32);
  }

  /** Tokens accepted so far. */
  get numTokens(): number {
    return this.numAccepted;
  }

  /** Whether a stop token was accepted: the answer is complete. */
  get isTerminated(): boolean {
    this.checkOpen('isTerminated');
    return callXGrammar(this.xg, 'reading a matcher', () => this.matcher.isTerminated());
  }

  /** Writes the next token's bitmask into `out` (maskWords words). */
  fillMask(out: Int32Array): void {
    this.checkOpen('fillMask');
    if (out.length !== this.maskWords) {
      throw new InternalError(
        `ResponseMatcher.fillMask: the mask has ${out.length} words but a vocabulary of ${this.vocabSize} needs ${this.maskWords}`,
      );
    }
    // XGrammar aborts (and its instance is lost) when asked for a mask after the stop token.
    if (this.isTerminated) throw new InternalError('ResponseMatcher.fillMask after the stop token: the answer is complete');
    const handle = (this.matcher as unknown as { handle: MatcherHandle }).handle;
    callXGrammar(this.xg, 'computing a token mask', () => {
      const words = handle.GetNextTokenBitmask(this.vocabSize);
      try {
        const n = words.size();
        if (n !== out.length) throw new InternalError(`XGrammar returned a mask of ${n} words; ${out.length} were expected`);
        for (let i = 0; i < n; i++) out[i] = words.get(i);
      } finally {
        words.delete();
      }
    });
    this.guard.restrict(out, this.utf8State);
  }

  /** The token sampled for this request. InternalError if the mask did not allow it (it was not applied). */
  accept(tokenId: number): void {
    this.checkOpen('accept');
    if (!Number.isInteger(tokenId) || tokenId < 0 || tokenId >= this.vocabSize) {
      throw new InternalError(`ResponseMatcher.accept: token id ${tokenId} is outside the vocabulary of ${this.vocabSize}`);
    }
    if (this.isTerminated) throw new InternalError(`ResponseMatcher.accept(${tokenId}) after the stop token: the answer was complete`);
    const utf8State = this.guard.advance(this.utf8State, tokenId);
    const ok = utf8State >= 0 && callXGrammar(this.xg, 'accepting a token', () => this.matcher.acceptToken(tokenId));
    if (!ok) {
      throw new InternalError(
        `token ${tokenId} (output token ${this.numAccepted}) is not allowed by the response_format grammar: ` +
          "the grammar's mask was not applied to the logits",
      );
    }
    this.utf8State = utf8State;
    this.numAccepted++;
  }

  /** Frees the WebAssembly matcher. Safe to call more than once. */
  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.onDispose(this);
    if (this.xg.damage === undefined) this.matcher.dispose();
  }

  private checkOpen(what: string): void {
    if (this.disposed) throw new InternalError(`ResponseMatcher.${what} after dispose()`);
  }
}
