// tokenizer-info.ts: XGrammar's TokenizerInfo (the vocabulary it matches grammars against) from the model's
// own tokenizer. The bitmask it yields has one bit per logit, so its size is the model's vocab_size
// (config.json), which may exceed the tokenizer's:
//
//   ids   0 ............................ tokenizer size - 1 | ... vocab_size - 1
//         the tokenizer's pieces ('' for special tokens)      | padding: never allowed
//
// XGrammar never allows a token whose string is '' (its "special" tokens) nor an id past the list, so
// special added tokens (<image>, <|im_start|>, ...) are blanked: a grammar would otherwise let one
// appear inside a JSON string, and decoding skips it. Stop tokens are the exception: the grammar allows
// them exactly where the answer may end.
//
// The vocabulary type says how a piece maps to bytes, decided from tokenizer.json's decoder the way
// XGrammar's own Hugging Face detection does, with one addition:
//   decoder step ByteLevel                  -> 'byte_level'     GPT-2 byte-to-character table (SmolVLM)
//   decoder step ByteFallback               -> 'byte_fallback'  '<0x0A>' is byte 0x0A, '▁' is a space (Llama 2)
//   decoder step Metaspace (no ByteFallback) -> 'byte_fallback'  XGrammar would say 'raw' and keep '▁' as
//                                                                 text; 'byte_fallback' turns it into a space
//                                                                 and leaves other pieces as they are
//   anything else                           -> 'raw'            pieces are the text itself
// XGrammar 0.1.27 also takes "prepend space in tokenization" but only stores it (its matcher never reads it),
// so it is passed as false.

import type { TokenizerInfo } from '@mlc-ai/web-xgrammar';
import { InternalError, ProcessorConfigError } from '../errors';
import type { TextTokenizer } from '../processor/tokenizer';
import { callXGrammarAsync, type XGrammarModule } from './load-xgrammar';

export type VocabType = 'byte_level' | 'byte_fallback' | 'raw';

/** The vocabulary type from the decoder's steps (TextTokenizer.decoderSteps); see the file header. */
export function vocabTypeOf(decoderSteps: readonly string[]): VocabType {
  if (decoderSteps.includes('ByteLevel')) return 'byte_level';
  if (decoderSteps.includes('ByteFallback') || decoderSteps.includes('Metaspace')) return 'byte_fallback';
  return 'raw';
}

export interface GrammarVocabulary {
  /** Pieces in id order, special tokens blanked (see the file header); at most `vocabSize` long. */
  pieces: string[];
  vocabType: VocabType;
  /** The model's vocab_size: the number of logits, and of bits in a mask. */
  vocabSize: number;
  stopTokenIds: number[];
}

/**
 * What XGrammar needs from `tokenizer`, for a model with `vocabSize` logits. `stopTokenIds` are the tokens
 * that end a request (src/processor/stop-tokens.ts); the grammar allows them where the answer is complete.
 */
export function grammarVocabulary(tokenizer: TextTokenizer, vocabSize: number, stopTokenIds: readonly number[]): GrammarVocabulary {
  if (!Number.isInteger(vocabSize) || vocabSize <= 0)
    throw new InternalError(`grammarVocabulary: vocabSize ${vocabSize} is not a positive integer`);
  if (stopTokenIds.length === 0) throw new InternalError('grammarVocabulary: no stop token ids; the grammar could never end');
  const stops = new Set(stopTokenIds);
  for (const id of stops) {
    if (!Number.isInteger(id) || id < 0 || id >= vocabSize) {
      throw new ProcessorConfigError(
        `stop token id ${id} is outside the model's vocabulary of ${vocabSize} tokens; config.json and the tokenizer disagree.`,
      );
    }
  }
  // Pieces past vocab_size have no logit, so they can never be sampled: drop them.
  const pieces = tokenizer.vocabulary().slice(0, vocabSize);
  for (let id = 0; id < pieces.length; id++) {
    if (tokenizer.isSpecial(id) && !stops.has(id)) pieces[id] = '';
  }
  return { pieces, vocabType: vocabTypeOf(tokenizer.decoderSteps), vocabSize, stopTokenIds: [...stops] };
}

/** XGrammar's TokenizerInfo for `vocab` (dispose() it, or let GrammarCache own it). */
export async function createTokenizerInfo(xg: XGrammarModule, vocab: GrammarVocabulary): Promise<TokenizerInfo> {
  return await callXGrammarAsync(xg, 'building the TokenizerInfo', () =>
    xg.api.TokenizerInfo.createTokenizerInfo(vocab.pieces, vocab.vocabType, false, vocab.vocabSize, vocab.stopTokenIds),
  );
}
