// A Node program using the installed package through 'tessera/node' (default options: encoder worker
// threads): one request, then engine.destroy(), and nothing else; the process must then exit by itself.
// Prints one JSON line for test/consumer/consumer.test.ts, which copies test/helpers/error-classes.ts beside this.
//   node out/main.js <model dir> <image> <max tokens>

import { readFile } from 'node:fs/promises';
import * as tessera from 'tessera/node';
import { ContextLengthError, createEngine, type ChatCompletionRequest, type Engine, type NodeEngineOptions } from 'tessera/node';
import { errorClassNames } from './error-classes.js';

/** Compiled, never run: each line fails to compile if the package's types are missing or `any`. */
export function typeChecks(engine: Engine, options: NodeEngineOptions): void {
  const name: 'ContextLengthError' = new ContextLengthError(1, 2, 3).name;
  const request: ChatCompletionRequest = { messages: [{ role: 'user', content: 'hi' }], tessera: { encodeTimeoutMs: 1000 } };
  const cacheDir: string | undefined = options.encoder?.cacheDir;
  // @ts-expect-error max_tokens is a number
  void engine.chat.completions.create({ ...request, max_tokens: 'many' });
  void [name, cacheDir];
}

/** Error classes whose `name` differs from their export name (in the app's minified bundle, for the page). */
function badErrorNames(): string[] {
  return errorClassNames(tessera as unknown as Record<string, unknown>)
    .filter((c) => c.name !== c.exportName)
    .map((c) => `${c.exportName} says ${c.name}`);
}

const [model, imagePath, maxTokens] = process.argv.slice(2);
try {
  const engine = await createEngine({ model });
  const r = await engine.chat.completions.create({
    messages: [{ role: 'user', content: [{ type: 'image', image: await readFile(imagePath) }, { type: 'text', text: 'Can you describe this image?' }] }],
    max_tokens: Number(maxTokens),
  });
  // A response_format answer: XGrammar's WebAssembly loads from the installed package in Node too.
  const json = await engine.chat.completions.create({
    messages: [{ role: 'user', content: 'A pet, as JSON.' }],
    max_tokens: 80,
    response_format: {
      type: 'json_schema',
      json_schema: {
        name: 'pet',
        schema: { type: 'object', properties: { kind: { enum: ['cat', 'dog'] }, age: { type: 'integer', minimum: 0, maximum: 20 } }, required: ['kind', 'age'] },
      },
    },
  });
  const encoderMode = engine.stats().encoder.mode;
  engine.destroy();
  console.log(JSON.stringify({ tokenIds: r.tessera.tokenIds, encoderMode, badNames: badErrorNames(), json: json.choices[0].message.content }));
} catch (e) {
  const err = e as Error & { code?: string };
  console.log(JSON.stringify({ error: { name: err.name, code: err.code, message: err.message } }));
  process.exitCode = 1;
}
