// tokenizer.ts: the checkpoint's own tokenizer (tokenizer.json + tokenizer_config.json, or Mistral's
// tekken.json converted to that form by tekken.ts) through @huggingface/tokenizers, plus encoding of
// "segments" so that only trusted text can produce special tokens.
//
// Why segments: HF tokenizes the whole rendered prompt and splits out added tokens (`<image>`,
// `<end_of_utterance>`, ...) wherever they appear, including inside text the user typed. Here each segment
// says whether it may contain added tokens (chat-template literals, image expansions) or not (user text).
// Added tokens are split out of trusted segments only; the plain text between added tokens is then
// concatenated across segment borders and tokenized as one run, exactly as HF would tokenize it. So for
// user text without added-token strings the ids equal HF's, and with them the strings stay plain text.
//
//   segments:  [T "<|im_start|>User:"] [U "hi <image>"] [T "<end_of_utterance>\nAssistant:"]
//   items:     <|im_start|>  "User:hi <image>"           <end_of_utterance>  "\nAssistant:"
//              (added id)    (one BPE run: 'User', ':', 'hi', ' <', 'image', '>')
//
// Scope: added tokens are matched on raw text (SmolVLM's all have normalized=false) and lstrip/rstrip are
// honoured; tokenizer_config's remove_space / do_lowercase_and_remove_accent (not used by SmolVLM) are not.

import { Tokenizer } from '@huggingface/tokenizers';
import { ProcessorConfigError } from '../errors';
import { readJson, type ModelFiles } from './files';

export interface Segment {
  text: string;
  /** True: added tokens in `text` become their ids. False: `text` is plain text, whatever it contains. */
  trusted: boolean;
}

interface AddedTokenInfo {
  id: number;
  content: string;
  lstrip: boolean;
  rstrip: boolean;
  special: boolean;
}

export interface SegmentEncoding {
  ids: number[];
  /** [start, end) token range of each segment whose text began and ended on a token boundary, else null. */
  ranges: Array<[number, number] | null>;
}

type Json = Record<string, unknown>;

function tokenString(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  if (v && typeof v === 'object' && typeof (v as Json).content === 'string') return (v as Json).content as string;
  return undefined;
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

export class TextTokenizer {
  /** The underlying @huggingface/tokenizers tokenizer (decode, tokenize, lookups). */
  private readonly hf: Tokenizer;
  /** tokenizer_config.json, as parsed (chat_template, bos/eos strings, ...). */
  readonly tokenizerConfig: Json;
  private readonly baseVocab: Map<string, number>;
  private readonly added: Map<string, AddedTokenInfo>;
  private readonly specialIds: Set<number>;
  private readonly addedPattern: RegExp | null;
  private readonly unkId: number | undefined;
  private readonly postPrefix: number[];
  private readonly postSuffix: number[];

  private constructor(tokenizerJson: Json, tokenizerConfig: Json) {
    this.tokenizerConfig = tokenizerConfig;
    this.hf = new Tokenizer(tokenizerJson, tokenizerConfig);
    const model = tokenizerJson.model as Json | undefined;
    this.baseVocab = baseVocabulary(model);
    const unk = typeof model?.unk_token === 'string' ? model.unk_token : undefined;
    this.unkId = unk !== undefined ? this.baseVocab.get(unk) : undefined;
    this.added = new Map();
    this.specialIds = new Set();
    for (const t of (tokenizerJson.added_tokens as Json[] | undefined) ?? []) {
      const info: AddedTokenInfo = {
        id: t.id as number,
        content: t.content as string,
        lstrip: t.lstrip === true,
        rstrip: t.rstrip === true,
        special: t.special === true,
      };
      this.added.set(info.content, info);
      if (info.special) this.specialIds.add(info.id);
    }
    // Leftmost-longest match, like the HF added-vocabulary splitter.
    const contents = [...this.added.keys()].sort((a, b) => b.length - a.length);
    this.addedPattern = contents.length ? new RegExp(contents.map(escapeRegExp).join('|'), 'g') : null;
    [this.postPrefix, this.postSuffix] = this.postProcessorWrap();
  }

  /**
   * From tokenizer.json; or else from Mistral's tekken.json (Voxtral checkpoints from mistralai; tekken.ts);
   * or else, for a Qwen2 tokenizer, from vocab.json + merges.txt as transformers converts them (qwen2-bpe.ts).
   */
  static async load(files: ModelFiles): Promise<TextTokenizer> {
    const json = await readJson(files, 'tokenizer.json');
    const config = (await readJson(files, 'tokenizer_config.json')) ?? {};
    if (!json && config.tokenizer_class === 'Qwen2Tokenizer') {
      const [vocab, merges] = [await readJson(files, 'vocab.json'), await files.readText('merges.txt')];
      if (vocab && merges !== undefined) {
        const { qwen2BpeToTokenizerJson } = await import('./qwen2-bpe');
        return new TextTokenizer(qwen2BpeToTokenizerJson(vocab, merges, config, files.where), config);
      }
    }
    if (!json) {
      const tekken = await readJson(files, 'tekken.json');
      if (!tekken) {
        throw new ProcessorConfigError(
          `tokenizer.json is missing from ${files.where}, and so is tekken.json (Mistral's format)${config.tokenizer_class === 'Qwen2Tokenizer' ? ', and vocab.json + merges.txt (a Qwen2 tokenizer)' : ''}; one of them is needed to tokenize prompts and decode generated tokens.`,
        );
      }
      // Loaded only for such checkpoints: the conversion is not in every page's bundle.
      const { tekkenToTokenizerJson } = await import('./tekken');
      const converted = tekkenToTokenizerJson(tekken, `tekken.json in ${files.where}`);
      return new TextTokenizer(converted.tokenizer, { ...converted.config, ...config });
    }
    if (!json.model || typeof json.model !== 'object') {
      throw new ProcessorConfigError(`tokenizer.json in ${files.where} has no "model" object; it is not a tokenizers file.`);
    }
    return new TextTokenizer(json, config);
  }

  /** Id of a token string (added or base vocabulary), or undefined. */
  tokenId(token: string): number | undefined {
    return this.added.get(token)?.id ?? this.baseVocab.get(token);
  }

  /** The vocabulary's own string for `id` (byte-level pieces as stored, e.g. 'Ġhello'), or undefined. */
  piece(id: number): string | undefined {
    return this.hf.model?.vocab[id];
  }

  /**
   * Every token's string in id order, added tokens included (byte-level pieces as stored, e.g. 'Ġhello');
   * '' where no token has that id. Its length is the largest id + 1, which may differ from config.json's
   * vocab_size. For grammars that need the whole vocabulary (src/grammar/tokenizer-info.ts).
   */
  vocabulary(): string[] {
    let size = 0;
    for (const id of this.baseVocab.values()) size = Math.max(size, id + 1);
    for (const t of this.added.values()) size = Math.max(size, t.id + 1);
    const out = new Array<string>(size).fill('');
    for (const [token, id] of this.baseVocab) out[id] = token;
    for (const t of this.added.values()) out[t.id] = t.content;
    return out;
  }

  /** The decoder's steps as tokenizer.json names them ('ByteLevel'; a Sequence lists its steps). */
  get decoderSteps(): string[] {
    const c = this.hf.decoder?.config as { type?: string; decoders?: Array<{ type?: string }> } | undefined;
    if (!c?.type) return [];
    return c.type === 'Sequence' ? (c.decoders ?? []).map((d) => d.type ?? '') : [c.type];
  }

  /** Like tokenId, but the token must exist. */
  requireTokenId(token: string, why: string): number {
    const id = this.tokenId(token);
    if (id === undefined) throw new ProcessorConfigError(`the tokenizer has no token '${token}', which is needed ${why}.`);
    return id;
  }

  /** The first added token (special or not) written in `text`, or undefined: such text, if trusted, would become its id. */
  addedTokenIn(text: string): string | undefined {
    if (!this.addedPattern) return undefined;
    const re = new RegExp(this.addedPattern.source);
    return re.exec(text)?.[0];
  }

  isSpecial(id: number): boolean {
    return this.specialIds.has(id);
  }

  /** Token ids the tokenizer treats as special (skipped by decode with skipSpecialTokens). */
  get specialTokenIds(): ReadonlySet<number> {
    return this.specialIds;
  }

  /**
   * Encodes segments (see the file header). Adds the post-processor's special tokens (BOS/EOS of a
   * TemplateProcessing) when `addSpecialTokens`, as HF's processor call does by default.
   */
  encodeSegments(segments: readonly Segment[], addSpecialTokens = true): SegmentEncoding {
    type Item = { kind: 'added'; id: number } | { kind: 'text'; text: string };
    const items: Item[] = [];
    const segItemRange: Array<[number, number] | null> = [];
    let pending = '';
    let trimNextStart = false;
    const flush = (): void => {
      if (pending.length) items.push({ kind: 'text', text: pending });
      pending = '';
    };
    const appendText = (s: string): void => {
      if (trimNextStart) {
        s = s.trimStart();
        if (s.length) trimNextStart = false;
      }
      pending += s;
    };
    for (const seg of segments) {
      // A segment maps to whole tokens only if it starts and ends at a token boundary: no text of a
      // neighbouring segment may share a BPE run with its own text.
      const pieces = seg.trusted ? this.splitAdded(seg.text) : [seg.text];
      const startsClean = pending.length === 0 || (pieces.length > 0 && typeof pieces[0] !== 'string');
      let firstItem = pending.length === 0 ? items.length : -1;
      for (const piece of pieces) {
        if (typeof piece === 'string') {
          appendText(piece);
        } else {
          if (piece.lstrip) pending = pending.trimEnd();
          flush();
          if (firstItem < 0) firstItem = items.length;
          items.push({ kind: 'added', id: piece.id });
          trimNextStart = piece.rstrip;
        }
      }
      const endsClean = pending.length === 0;
      segItemRange.push(startsClean && endsClean && firstItem >= 0 ? [firstItem, items.length] : null);
    }
    flush();

    const ids: number[] = [...(addSpecialTokens ? this.postPrefix : [])];
    const itemStart: number[] = [];
    items.forEach((item, i) => {
      itemStart.push(ids.length);
      if (item.kind === 'added') ids.push(item.id);
      else for (const id of this.encodePlain(item.text, i)) ids.push(id);
    });
    itemStart.push(ids.length);
    if (addSpecialTokens) ids.push(...this.postSuffix);
    const ranges = segItemRange.map((r) => (r ? ([itemStart[r[0]]!, itemStart[r[1]]!] as [number, number]) : null));
    return { ids, ranges };
  }

  /** Plain text (no added-token splitting) → ids: normalizer, pre-tokenizer, model, base vocabulary. */
  encodePlain(text: string, sectionIndex = 0): number[] {
    let t = text;
    if (this.hf.normalizer) t = this.hf.normalizer(t);
    if (!t.length) return [];
    const words = this.hf.pre_tokenizer ? this.hf.pre_tokenizer(t, { section_index: sectionIndex }) : [t];
    const model = this.hf.model;
    if (!model) throw new ProcessorConfigError('tokenizer.json has no model; it cannot encode text.');
    return model(words).map((tok) => {
      const id = this.baseVocab.get(tok) ?? this.unkId;
      if (id === undefined)
        throw new ProcessorConfigError(`the tokenizer model produced '${tok}', which is not in its vocabulary, and it has no unk_token.`);
      return id;
    });
  }

  /** Decodes ids (HF semantics of @huggingface/tokenizers); '' for an empty list. */
  decode(ids: readonly number[], skipSpecialTokens: boolean): string {
    if (ids.length === 0) return '';
    return this.hf.decode(ids as number[], { skip_special_tokens: skipSpecialTokens });
  }

  /** Token id of a tokenizer_config.json special-token attribute (eos_token, bos_token, ...). */
  configTokenId(attribute: string): number | undefined {
    const s = tokenString(this.tokenizerConfig[attribute]);
    return s === undefined ? undefined : this.tokenId(s);
  }

  /** The tokenizer_config.json special-token strings a chat template may reference. */
  templateTokens(): Record<string, string> {
    const out: Record<string, string> = {};
    for (const key of ['bos_token', 'eos_token', 'unk_token', 'sep_token', 'pad_token', 'cls_token', 'mask_token']) {
      const s = tokenString(this.tokenizerConfig[key]);
      if (s !== undefined) out[key] = s;
    }
    return out;
  }

  private splitAdded(text: string): Array<string | AddedTokenInfo> {
    if (!this.addedPattern) return [text];
    const out: Array<string | AddedTokenInfo> = [];
    let last = 0;
    for (const m of text.matchAll(this.addedPattern)) {
      if (m.index! > last) out.push(text.slice(last, m.index));
      out.push(this.added.get(m[0])!);
      last = m.index! + m[0].length;
    }
    if (last < text.length) out.push(text.slice(last));
    return out;
  }

  /** Special tokens the post-processor puts before and after a single sequence (e.g. BOS), as ids. */
  private postProcessorWrap(): [number[], number[]] {
    const post = this.hf.post_processor;
    if (!post) return [[], []];
    const marker = '\u0000tessera-marker\u0000';
    const { tokens } = post([marker], null, true) as { tokens: string[] };
    const at = tokens.indexOf(marker);
    if (at < 0) return [[], []];
    const toIds = (ts: string[]): number[] => ts.map((s) => this.requireTokenId(s, 'by the tokenizer post-processor'));
    return [toIds(tokens.slice(0, at)), toIds(tokens.slice(at + 1))];
  }
}

/** token → id of the model's own vocabulary, without added tokens (BPE/WordPiece object, Unigram list). */
function baseVocabulary(model: Json | undefined): Map<string, number> {
  const vocab = model?.vocab;
  const map = new Map<string, number>();
  if (Array.isArray(vocab)) {
    vocab.forEach((entry, i) => {
      map.set(Array.isArray(entry) ? String(entry[0]) : String(entry), i);
    });
  } else if (vocab && typeof vocab === 'object') {
    for (const [tok, id] of Object.entries(vocab as Record<string, number>)) map.set(tok, id);
  } else {
    throw new ProcessorConfigError('tokenizer.json model has no vocab; it is not a supported tokenizers file.');
  }
  return map;
}
