// bench:http's remote-engine side, in its own process (a client device beside the server): the built
// package's createRemoteEngine against the tessera serve at <url>, asking about the bench image in 'embeds'
// and in 'raw' mode: each ask's request bytes and time to first token (encoding on this side included),
// first ask and a second about the same image. One JSON line per mode on stdout.
//   tsx bench/http/remote.ts <server url> <model dir> <device> <image>

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

type NodeApi = typeof import('../../src/node');

const [url, model, device, imagePath] = process.argv.slice(2);
const dist = pathToFileURL(join(import.meta.dirname, '../../dist/node.js')).href;
const { createRemoteEngine } = (await import(/* @vite-ignore */ dist)) as NodeApi;
const image = new Uint8Array(readFileSync(imagePath));

for (const media of ['embeds', 'raw'] as const) {
  const remote = await createRemoteEngine({ baseURL: `${url}/v1`, model: 'bench', checkpoint: model, device: device as 'auto', media });
  try {
    const asks: Array<{ ask: string; requestBytes: number; ttftMs: number; totalMs: number }> = [];
    for (const [i, question] of ['Can you describe this image?', 'What colour is the sky in it?'].entries()) {
      const t0 = performance.now();
      let ttft = 0;
      const stream = await remote.chat.completions.create({
        messages: [
          {
            role: 'user',
            content: [
              { type: 'image', image },
              { type: 'text', text: question },
            ],
          },
        ],
        max_tokens: 8,
        stream: true,
      });
      for await (const c of stream) if (!ttft && c.choices[0]?.delta.content) ttft = performance.now() - t0;
      asks.push({
        ask: i === 0 ? 'first' : 'second (same image)',
        requestBytes: remote.stats().last!.requestBytes,
        ttftMs: ttft,
        totalMs: performance.now() - t0,
      });
    }
    const s = remote.stats();
    console.log(JSON.stringify({ media, mode: s.mode, fallback: s.fallback, imageBytesSent: s.imageBytesSent, asks }));
  } finally {
    remote.destroy();
  }
}
