// The chat: a conversation of turns, each a user message (text + attachments) and the assistant's
// streamed answer. Every request carries the whole history OpenAI-style (earlier user messages with
// their images, earlier answers as assistant messages); a repeated image costs no encode, its embeddings
// come from the encoder cache. A stopped answer keeps its text and stays in the history; a failed turn
// shows its error and is left out of the history (so one bad image does not poison the next question).
// A turn with videos asks for the sampled frames' thumbnails and shows them above its answer.

import type { Engine } from '../src/engine/engine';
import type { ChatCompletionChunk, ChatCompletionMessage, TesseraInfo } from '../src/engine/types';
import { contentPart, release, thumbnail, type Attachment, type AudioAttachment } from './attachments';
import { errorParts, isStop, renderError } from './error-view';
import { formatMs, formatRate } from './format';
import { renderVideoFrames, VIDEO_THUMBNAIL_EDGE } from './video-frames-view';

export type RunRecord =
  | { text: string; info: TesseraInfo; finishReason: string; loadedFromCache: boolean }
  | { stopped: true; text: string }
  | { error: string; name: string; code?: string };

declare global {
  interface Window {
    /** The last finished request, for tests and the console. */
    tesseraRun?: RunRecord;
  }
}

type TurnState = 'streaming' | 'done' | 'stopped' | 'error';

interface Turn {
  text: string;
  attachments: Attachment[];
  answer: string;
  state: TurnState;
  /** A transcription: shown in the conversation, left out of its history (it was not a question). */
  transcription?: boolean;
}

export interface AskOptions {
  maxTokens: number;
  temperature: number;
}

export interface ChatEvents {
  /** Chat state for the page (body[data-chat]) and the status line. */
  onState(state: 'running' | 'done' | 'stopped' | 'error', status: string): void;
  /** While streaming (per chunk) and at the end: refresh the stats panel. */
  onStats(last: TesseraInfo | undefined, lastEncodeWasFirst: boolean): void;
}

export class Chat {
  private turns: Turn[] = [];
  private abort?: AbortController;

  constructor(
    private readonly list: HTMLOListElement,
    private readonly events: ChatEvents,
  ) {}

  get running(): boolean {
    return this.abort !== undefined;
  }

  /** The messages sent with a new user message: finished and stopped turns, answers included. */
  private history(): ChatCompletionMessage[] {
    const out: ChatCompletionMessage[] = [];
    for (const t of this.turns) {
      if ((t.state !== 'done' && t.state !== 'stopped') || t.transcription) continue;
      out.push(userMessage(t));
      if (t.answer) out.push({ role: 'assistant', content: t.answer });
    }
    return out;
  }

  clear(): void {
    this.abort?.abort(new Error('new chat'));
    for (const t of this.turns) for (const a of t.attachments) release(a);
    this.turns = [];
    this.list.replaceChildren();
  }

  stop(): void {
    this.abort?.abort(new Error('stopped by the user'));
  }

  async ask(engine: Engine, text: string, attachments: Attachment[], options: AskOptions, loadedFromCache: boolean): Promise<RunRecord> {
    const turn: Turn = { text, attachments, answer: '', state: 'streaming' };
    const messages = [...this.history(), userMessage(turn)];
    this.turns.push(turn);
    const view = this.renderTurn(turn);
    const abort = (this.abort = new AbortController());
    const encodesBefore = engine.stats().encoder.encodes;
    const hasImages = messages.some((m) => Array.isArray(m.content) && m.content.some((p) => p.type !== 'text'));
    const videoNames = attachments.filter((a) => a.kind === 'video').map((a) => a.name);
    const hasAudio = attachments.some((a) => a.kind === 'audio');
    this.events.onState(
      'running',
      videoNames.length > 0
        ? 'Decoding the video’s sampled frames and encoding them, then prefilling…'
        : hasAudio
          ? 'Decoding the audio and encoding its 30-second chunks, then prefilling…'
          : hasImages && encodesBefore === 0
            ? 'Reading and encoding the image, then prefilling… (the first image encoded in this session also compiles the encoder’s kernels in its worker, once)'
            : 'Preparing the prompt and prefilling…',
    );
    let record: RunRecord;
    let ended: [state: 'done' | 'stopped' | 'error', status: string];
    try {
      const stream = await engine.chat.completions.create({
        messages,
        max_tokens: options.maxTokens,
        temperature: options.temperature,
        stream: true,
        signal: abort.signal,
        // Only videos have thumbnails; earlier turns' videos come back too (tessera.videos is per video part).
        ...(videoNames.length > 0 ? { tessera: { videoThumbnails: VIDEO_THUMBNAIL_EDGE } } : {}),
      });
      let last: ChatCompletionChunk | undefined;
      for await (const chunk of stream) {
        const delta = chunk.choices[0].delta.content;
        if (delta) {
          turn.answer += delta;
          view.content.textContent = turn.answer;
          this.events.onState('running', 'Generating…');
          this.events.onStats(undefined, false);
        }
        last = chunk;
      }
      // Stop ends the stream quietly, as the openai client's streams end.
      if (abort.signal.aborted) throw new DOMException('stopped by the user', 'AbortError');
      const info = last!.tessera!;
      const finishReason = last!.choices[0].finish_reason ?? '';
      turn.state = 'done';
      // This turn's videos are the last video parts of the request (its user message comes last).
      if (videoNames.length > 0) view.content.before(renderVideoFrames(info.videos.slice(-videoNames.length), videoNames));
      const t = info.timings;
      view.meta.textContent =
        `${info.tokenIds.length} tokens (${finishReason === 'length' ? 'max tokens reached' : finishReason === 'stop' ? 'end of answer' : finishReason}) · ` +
        `first token after ${formatMs(t.ttftMs)} · ${formatRate(t.decodeTokensPerSecond, 'tok/s')}`;
      record = { text: turn.answer, info, finishReason, loadedFromCache };
      this.events.onStats(info, encodesBefore === 0 && info.media.some((m) => m.source === 'encoded'));
      ended = ['done', `Answered: ${info.tokenIds.length} tokens.`];
    } catch (e) {
      if (isStop(e)) {
        turn.state = 'stopped';
        const badge = document.createElement('span');
        badge.className = 'badge';
        badge.textContent = 'Stopped';
        view.meta.replaceChildren(
          badge,
          turn.answer ? 'by you; the partial answer stays in the conversation' : 'by you, before the first token',
        );
        record = { stopped: true, text: turn.answer };
        ended = ['stopped', 'Stopped.'];
      } else {
        turn.state = 'error';
        const p = errorParts(e);
        view.content.hidden = turn.answer === '';
        view.meta.replaceChildren(renderError(e, 'This turn is left out of the conversation history.'));
        record = { error: `${p.name}: ${p.message}`, name: p.name, code: p.code };
        ended = ['error', `${p.name}${p.code ? ` (${p.code})` : ''}`];
      }
      this.events.onStats(undefined, false);
    } finally {
      if (this.abort === abort) this.abort = undefined;
      view.item.dataset.state = turn.state;
      view.content.setAttribute('aria-busy', 'false');
    }
    window.tesseraRun = record;
    this.events.onState(...ended); // after `running` turned false, so the controls follow
    return record;
  }

  /** A transcription of one audio attachment (engine.audio.transcriptions), streamed like an answer. */
  async transcribe(engine: Engine, audio: AudioAttachment, options: AskOptions, loadedFromCache: boolean): Promise<RunRecord> {
    const turn: Turn = { text: 'Transcribe this.', attachments: [audio], answer: '', state: 'streaming', transcription: true };
    this.turns.push(turn);
    const view = this.renderTurn(turn);
    const abort = (this.abort = new AbortController());
    this.events.onState('running', 'Decoding the audio and encoding its 30-second chunks, then prefilling…');
    let record: RunRecord;
    let ended: [state: 'done' | 'stopped' | 'error', status: string];
    try {
      const events = await engine.audio.transcriptions.create({
        file: audio.file,
        stream: true,
        max_tokens: options.maxTokens,
        temperature: options.temperature,
        signal: abort.signal,
      });
      let info: TesseraInfo | undefined;
      for await (const e of events) {
        if (e.type === 'transcript.text.delta') {
          turn.answer += e.delta;
          view.content.textContent = turn.answer;
          this.events.onState('running', 'Transcribing…');
          this.events.onStats(undefined, false);
        } else {
          info = e.tessera;
        }
      }
      if (abort.signal.aborted) throw new DOMException('stopped by the user', 'AbortError');
      turn.state = 'done';
      const t = info!.timings;
      const a = info!.audios[0];
      view.meta.textContent =
        `Transcription · ${info!.tokenIds.length} tokens · ${a ? `${a.chunks.length} chunk(s) of 30 s, ${a.chunks.filter((c) => c.source !== 'encoded').length} from the cache · ` : ''}` +
        `first token after ${formatMs(t.ttftMs)} · ${formatRate(t.decodeTokensPerSecond, 'tok/s')}`;
      const finishReason = info!.tokenIds.length >= options.maxTokens ? 'length' : 'stop';
      record = { text: turn.answer, info: info!, finishReason, loadedFromCache };
      this.events.onStats(info, false);
      ended = ['done', `Transcribed: ${info!.tokenIds.length} tokens.`];
    } catch (e) {
      if (isStop(e)) {
        turn.state = 'stopped';
        view.meta.textContent = 'Stopped by you.';
        record = { stopped: true, text: turn.answer };
        ended = ['stopped', 'Stopped.'];
      } else {
        turn.state = 'error';
        const p = errorParts(e);
        view.content.hidden = turn.answer === '';
        view.meta.replaceChildren(renderError(e));
        record = { error: `${p.name}: ${p.message}`, name: p.name, code: p.code };
        ended = ['error', `${p.name}${p.code ? ` (${p.code})` : ''}`];
      }
      this.events.onStats(undefined, false);
    } finally {
      if (this.abort === abort) this.abort = undefined;
      view.item.dataset.state = turn.state;
      view.content.setAttribute('aria-busy', 'false');
    }
    window.tesseraRun = record;
    this.events.onState(...ended);
    return record;
  }

  private renderTurn(turn: Turn): { item: HTMLLIElement; content: HTMLElement; meta: HTMLElement } {
    const user = document.createElement('li');
    user.className = 'message user';
    const userRole = document.createElement('div');
    userRole.className = 'role';
    userRole.textContent = 'You';
    user.append(userRole);
    if (turn.attachments.length > 0) {
      const thumbs = document.createElement('div');
      thumbs.className = 'thumbs';
      thumbs.append(...turn.attachments.map(thumbnail));
      user.append(thumbs);
    }
    const userText = document.createElement('div');
    userText.className = 'content';
    userText.textContent = turn.text;
    user.append(userText);

    const item = document.createElement('li');
    item.className = 'message assistant';
    item.dataset.state = 'streaming';
    const role = document.createElement('div');
    role.className = 'role';
    role.textContent = 'Assistant';
    const content = document.createElement('div');
    content.className = 'content';
    // Screen readers announce the answer once it is complete (aria-busy goes false), not per token.
    content.setAttribute('aria-live', 'polite');
    content.setAttribute('aria-busy', 'true');
    const meta = document.createElement('div');
    meta.className = 'meta';
    item.append(role, content, meta);
    this.list.append(user, item);
    item.scrollIntoView({ block: 'nearest' });
    return { item, content, meta };
  }
}

function userMessage(t: Turn): ChatCompletionMessage {
  if (t.attachments.length === 0) return { role: 'user', content: t.text };
  return { role: 'user', content: [...t.attachments.map(contentPart), { type: 'text', text: t.text }] };
}
