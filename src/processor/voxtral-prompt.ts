// voxtral-prompt.ts: a Voxtral request → PromptPlan, by the rules of mistral-common's Tekken v7 instruct
// tokenizer (the model has no chat template; its processor asks mistral-common for the ids):
//
//   chat           <s> [INST] chunks [/INST] answer </s> [INST] chunks [/INST] ...  [INST] chunks [/INST]
//                  chunks, in the order given: text as plain Tekken tokens (never control tokens, whatever
//                  it says), audio as [BEGIN_AUDIO] [AUDIO] x n; adjacent text joined with "\n\n",
//                  consecutive messages of one role merged, an answer's trailing whitespace dropped
//   system         [SYSTEM_PROMPT] text [/SYSTEM_PROMPT] where it appears; refused beside audio, as
//                  mistral-common refuses it
//   transcription  <s> [INST] [BEGIN_AUDIO] [AUDIO] x n [/INST] lang:xx [TRANSCRIBE]   (lang:xx left out
//                  when no language is given)
//
// n = tokensPerChunk x the audio's 30-second chunks (the clip zero-padded to whole chunks): its [AUDIO] run is
// one placeholder per chunk, so each chunk is a media item of its own (cached and encoded apart).

import { InvalidMessageError } from '../errors';
import type { Role } from './chat-template';
import type { AudioPlaceholder, PromptPlan } from './prompt';
import type { TextTokenizer } from './tokenizer';

/** The control tokens a Voxtral prompt is built from, by id. */
export interface VoxtralControlIds {
  bos: number;
  eos: number;
  inst: number;
  endInst: number;
  audio: number;
  beginAudio: number;
  transcribe: number;
  systemPrompt: number;
  endSystemPrompt: number;
}

/** The names the ids are looked up by in tokenizer.json (mistral-common's Tekken special tokens). */
export const VOXTRAL_CONTROL_TOKENS: Record<keyof VoxtralControlIds, string> = {
  bos: '<s>',
  eos: '</s>',
  inst: '[INST]',
  endInst: '[/INST]',
  audio: '[AUDIO]',
  beginAudio: '[BEGIN_AUDIO]',
  transcribe: '[TRANSCRIBE]',
  systemPrompt: '[SYSTEM_PROMPT]',
  endSystemPrompt: '[/SYSTEM_PROMPT]',
};

export type VoxtralChunk = { type: 'text'; text: string } | { type: 'audio'; chunks: number };

export interface VoxtralMessage {
  role: Role;
  content: VoxtralChunk[];
}

export interface VoxtralPromptOptions {
  /** A transcription request (mistral-common TranscriptionRequest): one audio part, no text. */
  transcription?: { language?: string };
}

/** ISO 639-1: two lowercase letters (mistral-common's TranscriptionRequest takes these). */
const LANGUAGE = /^[a-z]{2}$/;

export function buildVoxtralPlan(
  tokenizer: TextTokenizer,
  ids: VoxtralControlIds,
  messages: readonly VoxtralMessage[],
  tokensPerChunk: number,
  options: VoxtralPromptOptions = {},
): PromptPlan {
  const out: number[] = [ids.bos];
  const audios: AudioPlaceholder[] = [];
  const pushAudio = (chunks: number) => {
    if (!Number.isInteger(chunks) || chunks < 1)
      throw new InvalidMessageError(`an audio part must have at least one 30-second chunk, got ${chunks}`);
    out.push(ids.beginAudio);
    const offset = out.length;
    const chunkRuns = Array.from({ length: chunks }, (_, c) => ({ offset: offset + c * tokensPerChunk, length: tokensPerChunk }));
    for (let i = 0; i < chunks * tokensPerChunk; i++) out.push(ids.audio);
    audios.push({ modality: 'audio', audioIndex: audios.length, chunkRuns, offset, length: chunks * tokensPerChunk });
  };
  const text = (s: string) => {
    for (const id of tokenizer.encodePlain(s)) out.push(id);
  };

  if (options.transcription) {
    const { language } = options.transcription;
    const parts = messages.flatMap((m) => m.content);
    const audio = parts.filter((p): p is Extract<VoxtralChunk, { type: 'audio' }> => p.type === 'audio');
    if (audio.length !== 1 || parts.length !== 1 || messages.length !== 1 || messages[0].role !== 'user') {
      throw new InvalidMessageError('a transcription takes exactly one audio part and nothing else (one user message, no text)');
    }
    if (language !== undefined && !LANGUAGE.test(language)) {
      throw new InvalidMessageError(
        `transcription language is ${JSON.stringify(language)}; use a two-letter ISO 639-1 code such as 'en' or 'fr', or leave it out`,
      );
    }
    out.push(ids.inst);
    pushAudio(audio[0].chunks);
    out.push(ids.endInst);
    if (language) text(`lang:${language}`);
    out.push(ids.transcribe);
    return { tokenIds: Uint32Array.from(out), placeholders: [], videos: [], audios };
  }

  // Consecutive messages of one role merged; adjacent text chunks joined with a blank line.
  const merged: VoxtralMessage[] = [];
  for (const m of messages) {
    const last = merged[merged.length - 1];
    if (last && last.role === m.role) last.content.push(...m.content);
    else merged.push({ role: m.role, content: [...m.content] });
  }
  for (const m of merged) {
    const joined: VoxtralChunk[] = [];
    for (const c of m.content) {
      const last = joined[joined.length - 1];
      if (c.type === 'text' && last?.type === 'text') joined[joined.length - 1] = { type: 'text', text: `${last.text}\n\n${c.text}` };
      else joined.push(c);
    }
    m.content = joined;
  }
  if (merged.length === 0 || merged[merged.length - 1].role !== 'user') {
    throw new InvalidMessageError("the last message must be the user's: Voxtral answers after a user turn");
  }
  const hasAudio = merged.some((m) => m.content.some((c) => c.type === 'audio'));
  for (const [i, m] of merged.entries()) {
    if (m.role === 'system') {
      if (hasAudio) {
        throw new InvalidMessageError(
          "Voxtral takes no system message in a conversation with audio (mistral-common refuses it too); put the instruction in the user's text",
        );
      }
      out.push(ids.systemPrompt);
      for (const c of m.content) if (c.type === 'text') text(c.text);
      out.push(ids.endSystemPrompt);
    } else if (m.role === 'user') {
      out.push(ids.inst);
      for (const c of m.content) {
        if (c.type === 'text') text(c.text);
        else pushAudio(c.chunks);
      }
      out.push(ids.endInst);
    } else {
      if (m.content.some((c) => c.type === 'audio')) {
        throw new InvalidMessageError(`messages[${i}] (assistant) has an audio part; only user messages take audio`);
      }
      const answer = m.content.map((c) => (c.type === 'text' ? c.text : '')).join('');
      text(answer.trimEnd());
      out.push(ids.eos);
    }
  }
  return { tokenIds: Uint32Array.from(out), placeholders: [], videos: [], audios };
}
