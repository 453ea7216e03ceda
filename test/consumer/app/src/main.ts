// A browser app using the installed tessera package with default options (encoder Web Workers): one
// request about the sample image with the bundled tiny model. The outcome goes to window.consumer for the
// test (test/consumer/consumer.test.ts) to read. The test copies test/helpers/error-classes.ts beside this.

import * as tessera from 'tessera';
import { ContextLengthError, createEngine, type ChatCompletionRequest, type Engine, type GpuContext } from 'tessera';
import { errorClassNames } from './error-classes.js';

interface Outcome {
  tokenIds?: number[];
  text?: string;
  encoderMode?: string;
  /** Which backend ran (engine.stats().device.backend). */
  backend?: string;
  /** Error classes whose `name` differs from their export name in this (minified) bundle. */
  badNames?: string[];
  /** With ?json: a response_format answer (XGrammar bundled by the app). */
  json?: string;
  error?: { name: string; message: string };
}

declare global {
  interface Window {
    consumer?: Outcome;
  }
}

/** Compiled, never run: each line fails to compile if the package's types are missing or `any`. */
export function typeChecks(engine: Engine, gpu: GpuContext): void {
  const device: GPUDevice = gpu.device;
  const name: 'ContextLengthError' = new ContextLengthError(1, 2, 3).name;
  const request: ChatCompletionRequest = { messages: [{ role: 'user', content: 'hi' }], tessera: { encodeTimeoutMs: 1000 } };
  // @ts-expect-error max_tokens is a number
  void engine.chat.completions.create({ ...request, max_tokens: 'many' });
  void [device, name];
}

/** Error classes whose `name` differs from their export name (in the app's minified bundle, for the page). */
function badErrorNames(): string[] {
  return errorClassNames(tessera as unknown as Record<string, unknown>)
    .filter((c) => c.name !== c.exportName)
    .map((c) => `${c.exportName} says ${c.name}`);
}

/** A small schema: enum, bounded string and integer. */
const PET = {
  type: 'object',
  properties: { name: { type: 'string', maxLength: 10 }, kind: { enum: ['cat', 'dog'] }, age: { type: 'integer', minimum: 0, maximum: 20 } },
  required: ['name', 'kind', 'age'],
  additionalProperties: false,
};

async function main(): Promise<Outcome> {
  // ?device=webgpu|wasm picks the backend; default options otherwise ('auto').
  const device = (new URLSearchParams(location.search).get('device') ?? undefined) as 'webgpu' | 'wasm' | undefined;
  const engine = await createEngine({ model: new URL('/models/smolvlm-tiny/', location.href).href, device });
  try {
    const image = new Uint8Array(await (await fetch('/sample.png')).arrayBuffer());
    const r = await engine.chat.completions.create({
      messages: [{ role: 'user', content: [{ type: 'image', image }, { type: 'text', text: 'Can you describe this image?' }] }],
      max_tokens: 20,
    });
    let json: string | undefined;
    if (new URLSearchParams(location.search).has('json')) {
      const j = await engine.chat.completions.create({
        messages: [{ role: 'user', content: 'A pet, as JSON.' }],
        max_tokens: 80,
        response_format: { type: 'json_schema', json_schema: { name: 'pet', schema: PET } },
      });
      json = j.choices[0].message.content;
    }
    return {
      json,
      tokenIds: r.tessera.tokenIds,
      text: r.choices[0].message.content,
      encoderMode: engine.stats().encoder.mode,
      backend: engine.stats().device.backend,
      badNames: badErrorNames(),
    };
  } finally {
    engine.destroy();
  }
}

main()
  .catch((e: unknown) => ({ error: { name: (e as Error).name, message: (e as Error).message } }))
  .then((outcome: Outcome) => {
    window.consumer = outcome;
    document.querySelector('#out')!.textContent = JSON.stringify(outcome);
  });
