// The engine's side of tool calling: whether the checkpoint can take a request's tools, the constraint its
// tool_choice puts on the answer's tokens, and the reader that turns the answer's text into tool calls.
//
//   tool_choice   constraint                                        answer read as calls
//   'auto'        tool-call-grammar.ts (free text, calls on trigger)  yes
//   'required'    tool-call-grammar.ts (calls only)                   yes
//   {name}        tool-call-grammar.ts (calls of that tool only)      yes
//   'none'        the token that opens a call never comes             no
//
// A checkpoint whose chat template teaches no tool-call syntax (src/processor/tool-call-syntax.ts) refuses
// tools, tool turns and tool calls by name (ToolsNotSupportedError) before any work.

import { ToolsNotSupportedError } from '../errors';
import type { FamilyProcessor } from '../families/family';
import { toolCallGrammar } from '../grammar/tool-call-grammar';
import type { ToolCallSyntax } from '../processor/tool-call-syntax';
import type { TokenConstraint } from './engine-request';
import type { CheckedRequest } from './intake/validate-request';
import type { ResponseGrammars } from './response-grammars';
import { ToolCallReader } from './tool-calls';
import type { ChatCompletion, ChatCompletionRequest, FinishReason } from './types';

/** The template's tool-call syntax, when the request needs one; ToolsNotSupportedError when it has none. */
export function toolSyntaxFor(req: ChatCompletionRequest, checked: CheckedRequest, processor: FamilyProcessor): ToolCallSyntax | undefined {
  const turn = req.messages.findIndex((m) => m?.role === 'tool' || (Array.isArray(m?.tool_calls) && m.tool_calls.length > 0));
  const field = checked.tools ? 'tools' : turn >= 0 ? `messages[${turn}]` : undefined;
  if (field === undefined) return undefined;
  if (!processor.toolSyntax) throw new ToolsNotSupportedError(processor.where, field);
  return processor.toolSyntax;
}

/** Never allows the listed token ids (every other token may come). */
class BannedTokens implements TokenConstraint {
  constructor(private readonly ids: readonly number[]) {}
  fillMask(out: Int32Array): void {
    out.fill(-1);
    for (const id of this.ids) if (id >> 5 < out.length) out[id >> 5]! &= ~(1 << (id & 31));
  }
  accept(): void {}
  dispose(): void {}
}

/** The constraint `tools` put on the answer (see the file header). */
export async function toolConstraint(
  tools: NonNullable<CheckedRequest['tools']>,
  syntax: ToolCallSyntax,
  grammars: () => ResponseGrammars,
  processor: FamilyProcessor,
): Promise<TokenConstraint | undefined> {
  if (tools.choice === 'none') {
    const begin = processor.tokenizer.tokenId(syntax.begin);
    return begin === undefined ? undefined : new BannedTokens([begin]);
  }
  return await grammars().constraint(toolCallGrammar(syntax, tools.tools, tools.choice, tools.parallel));
}

/** The reader of a request's answer, when its calls are read (tools offered, tool_choice not 'none'). */
export function toolReaderFor(req: ChatCompletionRequest, processor: FamilyProcessor): ToolCallReader | undefined {
  const offered = Array.isArray(req.tools) && req.tools.length > 0;
  if (!offered || req.tool_choice === 'none' || !processor.toolSyntax) return undefined;
  return new ToolCallReader(processor.toolSyntax);
}

/** A finished answer's message and finish reason, its calls read when `reader` is given. */
export function finishedAnswer(
  reader: ToolCallReader | undefined,
  text: string,
  finishReason: FinishReason,
): { message: ChatCompletion['choices'][0]['message']; finishReason: FinishReason } {
  if (!reader) return { message: { role: 'assistant', content: text, refusal: null }, finishReason };
  const read = reader.push(text);
  const content = read.content + reader.finish();
  if (read.calls.length === 0) return { message: { role: 'assistant', content, refusal: null }, finishReason };
  return {
    message: { role: 'assistant', content, refusal: null, tool_calls: read.calls },
    finishReason: finishReason === 'stop' ? 'tool_calls' : finishReason,
  };
}
