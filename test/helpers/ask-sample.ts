// The request several engine tests compare answers with: public/sample.png and "Can you describe this
// image?", greedy, with each step's log probability and its runner-up.

import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Engine } from '../../src/engine/engine';
import type { ChatCompletion } from '../../src/engine/types';

const IMAGE = new Uint8Array(readFileSync(resolve(import.meta.dirname, '../../public/sample.png')));

export function askAboutSample(engine: Engine, maxTokens = 6): Promise<ChatCompletion> {
  return engine.chat.completions.create({
    messages: [
      {
        role: 'user',
        content: [
          { type: 'image', image: IMAGE },
          { type: 'text', text: 'Can you describe this image?' },
        ],
      },
    ],
    max_tokens: maxTokens,
    logprobs: true,
    top_logprobs: 2,
  });
}
