// detokenizer.ts: streaming detokenization. Fed one token id at a time, emits text deltas whose
// concatenation equals decoding the whole sequence at once (special tokens skipped).
//
// Byte-level BPE splits multi-byte UTF-8 characters (emoji, accents, CJK) across tokens; decoding a token
// alone gives U+FFFD. The vLLM/TGI scheme handles this: keep two offsets into the id list,
//
//   ids:   ... [prefixOffset ............ readOffset) [readOffset ..... end)
//                 already emitted, kept as context       not yet emitted
//
// decode ids[prefixOffset:readOffset] and ids[prefixOffset:], and emit the difference once the longer text
// does not end in U+FFFD (an incomplete character). Decoding from prefixOffset rather than readOffset keeps
// decoders that treat the first token specially (SentencePiece's leading space) correct. flush() emits what
// is left, U+FFFD included, exactly as a batch decode would.
// Limitation: with clean_up_tokenization_spaces = true (not SmolVLM's setting) a clean-up that spans an
// emitted boundary (" ." → ".") cannot be taken back, so the stream may keep a space the batch decode drops.

import type { TextTokenizer } from './tokenizer';

const REPLACEMENT = '\uFFFD';

export class StreamingDetokenizer {
  private readonly ids: number[] = [];
  private prefixOffset = 0;
  private readOffset = 0;
  private emitted = '';

  constructor(
    private readonly tokenizer: TextTokenizer,
    private readonly skipSpecialTokens = true,
  ) {}

  /** Adds one generated token; returns the new text it completes ('' while a character is incomplete). */
  push(id: number): string {
    if (this.skipSpecialTokens && this.tokenizer.isSpecial(id)) return '';
    this.ids.push(id);
    const prefix = this.tokenizer.decode(this.ids.slice(this.prefixOffset, this.readOffset), false);
    const full = this.tokenizer.decode(this.ids.slice(this.prefixOffset), false);
    if (full.length > prefix.length && !full.endsWith(REPLACEMENT)) {
      const delta = full.slice(prefix.length);
      this.prefixOffset = this.readOffset;
      this.readOffset = this.ids.length;
      this.emitted += delta;
      return delta;
    }
    return '';
  }

  /** Ends the stream: returns any text still held back (incomplete characters decode to U+FFFD). */
  flush(): string {
    const prefix = this.tokenizer.decode(this.ids.slice(this.prefixOffset, this.readOffset), false);
    const full = this.tokenizer.decode(this.ids.slice(this.prefixOffset), false);
    const delta = full.slice(prefix.length);
    this.prefixOffset = this.readOffset = this.ids.length;
    this.emitted += delta;
    return delta;
  }

  /** Everything emitted so far. */
  get text(): string {
    return this.emitted;
  }
}
