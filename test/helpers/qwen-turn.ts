// One request of test/reference/make-qwen-input.ts (qwen-pipeline-input.json) as the user message the
// engine takes: its images and video frames read from their files, its text as is. The Qwen-VL engine
// tests on WebGPU and on the CPU backend ask the same requests.

import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { ChatCompletionRequest } from '../../src/engine/types';
import { qwenPipelineGoldens } from './goldens';

type Message = ChatCompletionRequest['messages'][number];

export function qwenTurn(id: string): Message {
  const spec = qwenPipelineGoldens().input.cases.find((c) => c.id === id);
  if (!spec) throw new Error(`qwen-pipeline-input.json has no request ${id}`);
  return {
    role: 'user',
    content: spec.content.map((p): Extract<Message['content'], unknown[]>[number] => {
      if (p.image) return { type: 'image', image: new Uint8Array(readFileSync(resolve(p.image))) };
      if (p.video) {
        const frames = p.video.frames.map((f, i) => ({
          image: new Uint8Array(readFileSync(resolve(f))),
          timestamp: p.video!.timestamps[i]!,
        }));
        return { type: 'video', video: { frames } };
      }
      return { type: 'text', text: p.text! };
    }),
  };
}
