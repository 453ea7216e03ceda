// chat-template.ts: the checkpoint's own Jinja chat template (via @huggingface/jinja), rendered so that we
// know which characters came from the template, which from user text, and where the images go.
//
// Template source, first found: chat_template.jinja, chat_template.json {"chat_template": "..."},
// tokenizer_config.json "chat_template" (a string, or a list of {name, template}: the one named "default").
//
// Rendering with provenance: each text part is replaced by a sentinel (U+E000 k U+E001, private-use
// characters) and the template is rendered once; the output splits into template literals (trusted: may
// hold special tokens such as <|im_start|> and the <image> marker the template writes for an image part)
// and sentinels (user text). A second, real rendering must equal the first with the sentinels substituted,
// or the template transformed user text (trim, escape, ...) and we refuse rather than guess.

import { Template } from '@huggingface/jinja';
import { ChatTemplateError, ChatTemplateLimitError, InternalError, ProcessorConfigError } from '../errors';
import { renderBounded } from './bounded-jinja';
import { DEFAULT_TEMPLATE_BOUNDS, type TemplateBounds } from './template-bounds';
import { readJson, type ModelFiles } from './files';

export type Role = 'system' | 'user' | 'assistant' | 'tool';
export const ROLES: readonly Role[] = ['system', 'user', 'assistant', 'tool'];

/** A call an assistant turn made, as templates read it (OpenAI's shape; `arguments` the JSON text as written). */
export interface TemplateToolCall {
  id?: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/** A tool offered to the model, as templates read it (OpenAI's `tools` item). */
export interface TemplateTool {
  type: 'function';
  function: { name: string; description?: string; parameters?: Record<string, unknown> };
}

/** What the template sees: OpenAI/HF-style messages, with image parts reduced to {type: 'image'}. */
export interface TemplateMessage {
  role: Role;
  content: Array<{ type: 'text'; text: string } | { type: 'image' } | { type: 'video' } | { type: 'audio' }>;
  /** An assistant turn's calls (rendered by templates that offer tools). */
  tool_calls?: TemplateToolCall[];
  /** A tool turn's answer to this call. */
  tool_call_id?: string;
}

export type RenderedPiece =
  | { kind: 'template'; text: string }
  | { kind: 'text'; text: string }
  | { kind: 'image'; index: number }
  | { kind: 'video'; index: number };

/** A fresh regex each call: a shared /g regex would carry lastIndex state between callers. */
const sentinelPattern = (): RegExp => /\uE000(\d+)\uE001/g;

export async function loadChatTemplateSource(files: ModelFiles, tokenizerConfig: Record<string, unknown>): Promise<string> {
  const jinja = await files.readText('chat_template.jinja');
  if (jinja !== undefined) return jinja;
  const json = await readJson(files, 'chat_template.json');
  if (json) {
    if (typeof json.chat_template !== 'string') {
      throw new ProcessorConfigError(`chat_template.json in ${files.where} has no string "chat_template".`);
    }
    return json.chat_template;
  }
  const t = tokenizerConfig.chat_template;
  if (typeof t === 'string') return t;
  if (Array.isArray(t)) {
    const named = t.find((x) => x && typeof x === 'object' && (x as Record<string, unknown>).name === 'default');
    const tmpl = named && (named as Record<string, unknown>).template;
    if (typeof tmpl === 'string') return tmpl;
  }
  throw new ProcessorConfigError(
    `no chat template in ${files.where}: expected chat_template.jinja, chat_template.json or tokenizer_config.json ` +
      '"chat_template". Add the checkpoint\'s template file.',
  );
}

export class ChatTemplate {
  private readonly template: Template;

  /**
   * `tokens`: bos_token, eos_token, ... strings from tokenizer_config.json, passed to the template.
   * `bounds`: steps, time and sizes a render may take (bounded-jinja.ts): the template is untrusted code.
   */
  constructor(
    readonly source: string,
    private readonly tokens: Record<string, string>,
    private readonly bounds: TemplateBounds = DEFAULT_TEMPLATE_BOUNDS,
  ) {
    try {
      this.template = new Template(source);
    } catch (e) {
      throw new ChatTemplateError(`the chat template does not parse (${(e as Error).message}); check the checkpoint's template file.`, {
        cause: e,
      });
    }
  }

  /** Whether the template reads `tools` (so a request's tools would be shown to the model). */
  get readsTools(): boolean {
    return /\btools\b/.test(this.source);
  }

  /**
   * Plain rendering, as HF `apply_chat_template(tokenize=False)`; `tools` (none: left undefined, as HF
   * leaves it) are passed as the template's `tools`.
   */
  render(messages: readonly TemplateMessage[], addGenerationPrompt: boolean, tools?: readonly TemplateTool[]): string {
    const callChars = (m: TemplateMessage) =>
      (m.tool_calls ?? []).reduce((b, c) => b + c.function.name.length + c.function.arguments.length, 0);
    const inputChars =
      messages.reduce((a, m) => a + callChars(m) + m.content.reduce((b, p) => b + (p.type === 'text' ? p.text.length : 0), 0), 0) +
      (tools?.length ? JSON.stringify(tools).length : 0);
    try {
      const items = {
        messages: messages as unknown as Record<string, unknown>[],
        add_generation_prompt: addGenerationPrompt,
        ...(tools?.length ? { tools: tools as unknown as Record<string, unknown>[] } : {}),
        ...this.tokens,
      };
      return renderBounded(this.template, items, this.bounds, inputChars);
    } catch (e) {
      if (e instanceof ChatTemplateLimitError) throw e;
      throw new ChatTemplateError(`the chat template failed to render (${(e as Error).message}); check the messages' shape.`, {
        cause: e,
      });
    }
  }

  /**
   * Renders and splits the output into template literals, user text and media markers (each `imageToken`,
   * and each `videoMarker` when given, the template writes, numbered in order per kind). Throws when the
   * template writes a different number of markers than there are parts of that kind, or transforms user text.
   * The names and arguments of an assistant turn's tool calls are user text too; `tools` are rendered as the
   * template writes them (JSON), as template text (the caller checks they hold no added token).
   */
  renderPieces(
    messages: readonly TemplateMessage[],
    imageToken: string,
    addGenerationPrompt: boolean,
    videoMarker?: string,
    tools?: readonly TemplateTool[],
  ): RenderedPiece[] {
    const texts: string[] = [];
    let numImages = 0;
    let numVideos = 0;
    const mask = (text: string) => {
      texts.push(text);
      return `\uE000${texts.length - 1}\uE001`;
    };
    const masked = messages.map((m) => ({
      ...m,
      ...(m.tool_calls
        ? {
            tool_calls: m.tool_calls.map((c) => ({
              ...c,
              function: { name: mask(c.function.name), arguments: mask(c.function.arguments) },
            })),
          }
        : {}),
      content: m.content.map((p) => {
        if (p.type === 'image') {
          numImages++;
          return p;
        }
        if (p.type === 'video') {
          numVideos++;
          return p;
        }
        if (p.type === 'audio')
          throw new InternalError('the chat template was given an audio part (audio checkpoints build their prompt in voxtral-prompt.ts)');
        return { type: 'text' as const, text: mask(p.text) };
      }),
    }));
    const withSentinels = this.render(masked, addGenerationPrompt, tools);
    const real = this.render(messages, addGenerationPrompt, tools);
    const substituted = withSentinels.replace(sentinelPattern(), (_, k: string) => texts[Number(k)]!);
    if (substituted !== real) {
      throw new ChatTemplateError(
        'the chat template changes message text (for example trims or escapes it), so Tessera cannot tell user ' +
          'text from template text to keep typed special tokens inert; use a template that inserts text verbatim.',
      );
    }
    const pieces: RenderedPiece[] = [];
    let imageIndex = 0;
    let videoIndex = 0;
    const pushImages = (literal: string): void => {
      const parts = literal.split(imageToken);
      parts.forEach((part, i) => {
        if (i > 0) pieces.push({ kind: 'image', index: imageIndex++ });
        if (part.length) pieces.push({ kind: 'template', text: part });
      });
    };
    const pushTemplate = (literal: string): void => {
      if (videoMarker === undefined) {
        pushImages(literal);
        return;
      }
      literal.split(videoMarker).forEach((part, i) => {
        if (i > 0) pieces.push({ kind: 'video', index: videoIndex++ });
        pushImages(part);
      });
    };
    let last = 0;
    for (const m of withSentinels.matchAll(sentinelPattern())) {
      pushTemplate(withSentinels.slice(last, m.index));
      pieces.push({ kind: 'text', text: texts[Number(m[1])]! });
      last = m.index! + m[0].length;
    }
    pushTemplate(withSentinels.slice(last));
    if (imageIndex !== numImages) {
      throw new ChatTemplateError(
        `the chat template wrote ${imageIndex} '${imageToken}' markers for ${numImages} image parts; ` +
          'each image part must become exactly one marker. Check the template and the messages.',
      );
    }
    if (videoIndex !== numVideos) {
      throw new ChatTemplateError(
        `the chat template wrote ${videoIndex} '${videoMarker ?? '<video>'}' markers for ${numVideos} video parts; ` +
          'each video part must become exactly one marker. Check the template and the messages.',
      );
    }
    return pieces;
  }
}
