// bench:http's in-process side, in its own process (as tessera serve runs in its own): the built package's
// engine (dist/node.js) under the same load levels as the server, one JSON line per level on stdout.
//   tsx bench/http/in-process.ts <model dir> <device> <tokens> <level,level,...>

import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { loadPrompt, runLoad } from './load';

type NodeApi = typeof import('../../src/node');

const [model, device, tokensArg, levelsArg] = process.argv.slice(2);
const tokens = Number(tokensArg);
const dist = pathToFileURL(join(import.meta.dirname, '../../dist/node.js')).href;
const { createEngine } = (await import(/* @vite-ignore */ dist)) as NodeApi;
const engine = await createEngine({ model, device: device as 'auto' });
const ask = (prompt: string, maxTokens: number) =>
  engine.chat.completions.create({
    messages: [{ role: 'user', content: prompt }],
    max_tokens: maxTokens,
    stream: true,
    stream_options: { include_usage: true },
  });
// warm-up: the first request pays for lazily made buffers
for await (const _ of await ask('warm up', 4));
console.log(JSON.stringify({ device: engine.stats().device }));
for (const level of levelsArg.split(',').map(Number)) {
  const figures = await runLoad(level, (i) => ask(loadPrompt(level, i), tokens));
  console.log(JSON.stringify(figures));
}
engine.destroy();
