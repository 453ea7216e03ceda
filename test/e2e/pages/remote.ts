// Remote engine harness (used by test/e2e/remote-engine.spec.ts): createRemoteEngine in this page, the
// sample image encoded here (the checkpoint's vision tower on `device`), two questions about it sent to
// the server at `baseURL`; returns the answers, what every request body held, and the engine's stats.

import type { RemoteEngineStats } from '../../../src/remote/remote-engine';

export interface RemoteBody {
  bytes: number;
  /** The image parts' types and uuids, in order. */
  parts: Array<{ type: string; uuid?: string; hasValues: boolean }>;
  /** The PNG's bytes (base64) appear in the body. */
  hasImageBytes: boolean;
}

export interface RemoteResult {
  answers: Array<{ tokenIds: number[]; text: string }>;
  streamed: string;
  bodies: RemoteBody[];
  stats: RemoteEngineStats;
}

declare global {
  interface Window {
    tesseraRemote?: (
      baseURL: string,
      model: string,
      checkpoint: string,
      device: 'webgpu' | 'wasm',
      media: 'embeds' | 'raw',
    ) => Promise<RemoteResult>;
  }
}

function toBase64(bytes: Uint8Array): string {
  let s = '';
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(s);
}

window.tesseraRemote = async (baseURL, model, checkpoint, device, media) => {
  const { createRemoteEngine } = await import('../../../src/remote/create-remote-browser');
  const sample = new Uint8Array(await (await fetch('/sample.png')).arrayBuffer());
  const pngBase64 = toBase64(sample).slice(0, 64);
  const bodies: RemoteBody[] = [];
  const recording: typeof fetch = (input, init) => {
    if (typeof init?.body === 'string') {
      const sent = JSON.parse(init.body) as { messages: Array<{ content: unknown }> };
      const parts = sent.messages.flatMap((m) => (Array.isArray(m.content) ? (m.content as Array<Record<string, unknown>>) : []));
      bodies.push({
        bytes: init.body.length,
        parts: parts
          .filter((p) => p.type !== 'text')
          .map((p) => ({
            type: String(p.type),
            uuid: p.uuid as string | undefined,
            hasValues: p.image_embeds !== null && p.image_embeds !== undefined,
          })),
        hasImageBytes: init.body.includes(pngBase64),
      });
    }
    return fetch(input, init);
  };
  const engine = await createRemoteEngine({ baseURL, model, checkpoint, device, media, fetch: recording, encoder: { mode: 'in-process' } });
  try {
    const ask = (text: string) => ({
      messages: [
        {
          role: 'user' as const,
          content: [
            { type: 'image' as const, image: sample },
            { type: 'text' as const, text },
          ],
        },
      ],
      max_tokens: 12,
    });
    const answers: RemoteResult['answers'] = [];
    for (const q of ['Can you describe this image?', 'What colour is it?']) {
      const r = await engine.chat.completions.create(ask(q));
      answers.push({ tokenIds: r.tessera.tokenIds, text: r.choices[0].message.content });
    }
    let streamed = '';
    for await (const c of await engine.chat.completions.create({ ...ask('Can you describe this image?'), stream: true })) {
      streamed += c.choices[0]?.delta.content ?? '';
    }
    return { answers, streamed, bodies, stats: engine.stats() };
  } finally {
    engine.destroy();
  }
};

document.body.dataset.ready = 'yes';
