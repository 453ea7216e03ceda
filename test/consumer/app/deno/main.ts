// A Deno program using the installed package: 'tessera', its browser entry (Deno has fetch, Web Workers, the
// Cache API and WebGPU), the checkpoint read from disk through a file: URL. One request on the device the
// engine chooses, then one on Deno's own WebGPU asked for by name; each engine destroyed, and the process
// must then exit by itself. Prints one JSON line for test/consumer/consumer.test.ts.
//   deno run -A --unstable-webgpu deno/main.ts <model dir> <max tokens>

import { createEngine } from 'tessera';

const [modelDir, maxTokens] = Deno.args;
const model = new URL(`${modelDir}/`, `file://${Deno.cwd()}/`).href;
const out: Record<string, unknown> = {};
for (const device of ['default', 'webgpu'] as const) {
  try {
    const engine = await createEngine({ model, kvCacheTokens: 1024, ...(device === 'webgpu' ? { device } : {}) });
    const r = await engine.chat.completions.create({
      messages: [{ role: 'user', content: 'Hello there' }],
      max_tokens: Number(maxTokens),
      logprobs: true,
      top_logprobs: 2,
    });
    const stats = engine.stats();
    out[device] = {
      backend: stats.device.backend,
      encoderMode: stats.encoder.mode,
      tokenIds: r.tessera.tokenIds,
      logprobs: r.choices[0].logprobs?.content ?? [],
    };
    engine.destroy();
  } catch (e) {
    const err = e as Error;
    out[device] = { error: { name: err.name, message: err.message } };
  }
}
console.log(JSON.stringify(out));
