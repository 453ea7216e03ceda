// The answer's text read as content and tool calls, in the syntax the chat template teaches
// (src/processor/tool-call-syntax.ts), while it streams:
//
//   "Let me look.\n<tool_call>\n{"name": "f", "arguments": {"x": 1}}\n</tool_call>"
//     content "Let me look."                     (streamed as it comes)
//     tool_calls [{ id, type: 'function', function: { name: 'f', arguments: '{"x": 1}' } }]
//                                                 (each streamed whole once its closing tag arrived)
//
// Text that may be the start of a call (a prefix of '<tool_call>', or whitespace) is held back until the
// next text says what it is. Whitespace around calls is dropped once a call was made; before any call it is
// content. The arguments are kept as the model wrote them (so the call, sent back in a later turn, renders
// as it was generated). A block that does not parse (only possible without a grammar) stays content, and so
// does a call cut off by max_tokens: nothing the model wrote is lost.

import type { ToolCallSyntax } from '../processor/tool-call-syntax';
import type { ToolCall } from './types';

/** What a piece of text turned into: content to show now and the calls completed by it. */
export interface ToolCallRead {
  content: string;
  calls: ToolCall[];
}

const ID_CHARS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** A call id as OpenAI writes them: 'call_' and 24 random letters and digits. */
function newToolCallId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(24));
  return `call_${Array.from(bytes, (b) => ID_CHARS[b % ID_CHARS.length]).join('')}`;
}

/** The length of the longest end of `text` that is a proper start of `marker`. */
function partialMarkerAtEnd(text: string, marker: string): number {
  for (let n = Math.min(marker.length - 1, text.length); n > 0; n--) if (marker.startsWith(text.slice(-n))) return n;
  return 0;
}

/** One block's text (between begin and end) as a call, or undefined when it does not parse as one. */
function parseToolCallBlock(syntax: ToolCallSyntax, block: string, id: string): ToolCall | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(block);
  } catch {
    return undefined;
  }
  const p = parsed as { name?: unknown; arguments?: unknown } | null;
  if (typeof p !== 'object' || p === null || typeof p.name !== 'string' || typeof p.arguments !== 'object' || p.arguments === null) {
    return undefined;
  }
  // As written, when the block is in the template's own form; else the parsed arguments re-serialised.
  const head = `${syntax.beforeName.trimStart()}${p.name}${syntax.beforeArguments}`;
  const text = block.trim();
  const written = text.startsWith(head) && text.endsWith('}') ? text.slice(head.length, -1).trim() : undefined;
  let args = JSON.stringify(p.arguments);
  if (written !== undefined) {
    try {
      JSON.parse(written);
      args = written;
    } catch {
      // keep the re-serialised form
    }
  }
  return { id, type: 'function', function: { name: p.name, arguments: args } };
}

export class ToolCallReader {
  /** Text not yet read out (a held-back tail, or an open call). */
  private pending = '';
  private inCall = false;
  /** The whitespace before the open call: dropped once it parses, content if it does not. */
  private gap = '';
  private numCalls = 0;

  constructor(
    private readonly syntax: ToolCallSyntax,
    private readonly newId: () => string = newToolCallId,
  ) {}

  /** Calls read so far. */
  get calls(): number {
    return this.numCalls;
  }

  /** The next piece of the answer's text. */
  push(text: string): ToolCallRead {
    this.pending += text;
    const out: ToolCallRead = { content: '', calls: [] };
    const { begin, end } = this.syntax;
    for (;;) {
      if (!this.inCall) {
        const at = this.pending.indexOf(begin);
        if (at < 0) {
          // A partial marker at the end, and the whitespace before it (dropped if a call follows).
          const partial = partialMarkerAtEnd(this.pending, begin);
          const before = this.pending.slice(0, this.pending.length - partial);
          const keep = partial + before.length - before.trimEnd().length;
          this.emit(out, this.pending.slice(0, this.pending.length - keep));
          this.pending = this.pending.slice(this.pending.length - keep);
          return out;
        }
        const before = this.pending.slice(0, at);
        this.emit(out, before.trimEnd());
        this.gap = before.slice(before.trimEnd().length);
        this.pending = this.pending.slice(at);
        this.inCall = true;
      }
      const close = this.pending.indexOf(end, begin.length);
      if (close < 0) return out;
      const block = this.pending.slice(begin.length, close);
      const call = parseToolCallBlock(this.syntax, block, this.newId());
      if (call) {
        out.calls.push(call);
        this.numCalls++;
      } else {
        this.emit(out, this.gap + this.pending.slice(0, close + end.length));
      }
      this.pending = this.pending.slice(close + end.length);
      this.gap = '';
      this.inCall = false;
    }
  }

  /** The answer ended: what was held back, as content (an unfinished call included; whitespace after calls dropped). */
  finish(): string {
    const rest = this.inCall ? this.gap + this.pending : this.pending;
    this.pending = '';
    this.gap = '';
    this.inCall = false;
    return this.numCalls > 0 && rest.trim() === '' ? '' : rest;
  }

  /** Content text; once a call was made, whitespace between calls is not content. */
  private emit(out: ToolCallRead, text: string): void {
    if (this.numCalls > 0 && text.trim() === '') return;
    out.content += text;
  }
}

/** A whole answer's text as content ('' when there is none besides calls) and calls. */
export function readToolCalls(syntax: ToolCallSyntax, text: string, newId: () => string = newToolCallId): ToolCallRead {
  const reader = new ToolCallReader(syntax, newId);
  const read = reader.push(text);
  return { content: read.content + reader.finish(), calls: read.calls };
}
