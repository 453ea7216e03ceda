// tool-call-grammar.ts: a request's tools and tool_choice as one XGrammar structural tag, so that every call
// the model writes parses and its arguments are valid against the tool's parameters schema. Each tool is a
// tag whose begin is the call written up to its arguments and whose content is the schema, in the syntax the
// chat template teaches (src/processor/tool-call-syntax.ts):
//
//   begin   '<tool_call>\n{"name": "get_weather", "arguments": '
//   content the parameters schema (checked and rewritten as response_format's are: grammar-source.ts)
//   end     '}\n</tool_call>'
//
//   tool_choice   structural tag
//   'auto'        triggered_tags: free text until the model writes '<tool_call>', then one of the tags;
//                 text may follow (XGrammar's own rule for a triggered tag)
//   'required'    tags_with_separator (at least one, '\n' between): the answer is calls only
//   {name}        the same with that tool's tag only
//   parallel_tool_calls false: stop after the first call.

import type { TemplateTool } from '../processor/chat-template';
import type { ToolCallSyntax } from '../processor/tool-call-syntax';
import { enforceableSchema, type ResponseFormatSpec } from './grammar-source';

/** tool_choice less 'none' (which has no grammar). */
export type ToolCallChoice = 'auto' | 'required' | { name: string };

/** A tool's parameters when it gives none: an object without members, as OpenAI reads a missing schema. */
const NO_PARAMETERS = { type: 'object', properties: {} };

/** The begin of a call of `name` (what the model writes before the arguments). */
function callPrefix(syntax: ToolCallSyntax, name: string): string {
  return `${syntax.begin}${syntax.beforeName}${name}${syntax.beforeArguments}`;
}

/**
 * The structural tag of `tools` under `choice` (UnsupportedSchemaError naming what cannot be enforced in
 * a tool's parameters).
 */
export function toolCallGrammar(
  syntax: ToolCallSyntax,
  tools: readonly TemplateTool[],
  choice: ToolCallChoice,
  parallel: boolean,
): ResponseFormatSpec {
  const offered = typeof choice === 'object' ? tools.filter((t) => t.function.name === choice.name) : tools;
  const tags = offered.map((t) => ({
    type: 'tag',
    begin: callPrefix(syntax, t.function.name),
    content: { type: 'json_schema', json_schema: enforceableSchema(t.function.parameters ?? NO_PARAMETERS) },
    end: `${syntax.afterArguments}${syntax.end}`,
  }));
  const format =
    choice === 'auto'
      ? { type: 'triggered_tags', triggers: [syntax.begin], tags, at_least_one: false, stop_after_first: !parallel }
      : { type: 'tags_with_separator', tags, separator: '\n', at_least_one: true, stop_after_first: !parallel };
  return { type: 'structural_tag', structural_tag: { type: 'structural_tag', format } };
}
