// The OpenAI `usage` of a finished request: its prompt and completion token counts.

import type { CompletionUsage, TesseraInfo } from './types';

export function usageOf(info: TesseraInfo): CompletionUsage {
  return {
    prompt_tokens: info.promptTokens,
    completion_tokens: info.tokenIds.length,
    total_tokens: info.promptTokens + info.tokenIds.length,
  };
}
