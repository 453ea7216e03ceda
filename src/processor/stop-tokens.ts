// stop-tokens.ts: the token ids that end generation, read from the checkpoint (never hard-coded).
// Union, in this order, de-duplicated:
//   generation_config.json eos_token_id (number or list)  — SmolVLM: 49279 <end_of_utterance>
//   config.json eos_token_id, text_config.eos_token_id     — SmolVLM: 2 <|im_end|>
//   tokenizer_config.json eos_token (a string → its id)    — SmolVLM: <end_of_utterance>
// HF `generate` stops on generation_config's ids; the others are ends the model also emits in practice.

import { ProcessorConfigError } from '../errors';
import { readJson, type ModelFiles } from './files';
import type { TextTokenizer } from './tokenizer';

function ids(v: unknown): number[] {
  if (typeof v === 'number' && Number.isInteger(v) && v >= 0) return [v];
  if (Array.isArray(v)) return v.filter((x): x is number => typeof x === 'number' && Number.isInteger(x) && x >= 0);
  return [];
}

export async function loadStopTokenIds(files: ModelFiles, tokenizer: TextTokenizer): Promise<number[]> {
  const gen = await readJson(files, 'generation_config.json');
  const model = await readJson(files, 'config.json');
  const text = model?.text_config as Record<string, unknown> | undefined;
  const fromTokenizer = tokenizer.configTokenId('eos_token');
  const all = [
    ...ids(gen?.eos_token_id),
    ...ids(model?.eos_token_id),
    ...ids(text?.eos_token_id),
    ...(fromTokenizer !== undefined ? [fromTokenizer] : []),
  ];
  const unique = [...new Set(all)];
  if (unique.length === 0) {
    throw new ProcessorConfigError(
      `no end-of-sequence token in ${files.where}: generation_config.json, config.json and tokenizer_config.json ` +
        "name none, so generation could not stop. Add the checkpoint's generation_config.json.",
    );
  }
  return unique;
}
