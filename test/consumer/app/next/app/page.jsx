'use client';
// A Next.js page (App Router, a client component) using the installed tessera package with default options
// (encoder Web Workers): the consumer app's request about the sample image, and a response_format request,
// once the page is in the browser. The outcome goes to window.consumer for test/consumer/consumer.test.ts.

import { useEffect, useState } from 'react';
import { createEngine } from 'tessera';

const PET = {
  type: 'object',
  properties: { name: { type: 'string', maxLength: 10 }, kind: { enum: ['cat', 'dog'] }, age: { type: 'integer', minimum: 0, maximum: 20 } },
  required: ['name', 'kind', 'age'],
  additionalProperties: false,
};

async function answer() {
  const device = new URLSearchParams(location.search).get('device') ?? undefined;
  const engine = await createEngine({ model: new URL('/models/smolvlm-tiny/', location.href).href, device });
  try {
    const image = new Uint8Array(await (await fetch('/sample.png')).arrayBuffer());
    const r = await engine.chat.completions.create({
      messages: [{ role: 'user', content: [{ type: 'image', image }, { type: 'text', text: 'Can you describe this image?' }] }],
      max_tokens: 20,
    });
    const j = await engine.chat.completions.create({
      messages: [{ role: 'user', content: 'A pet, as JSON.' }],
      max_tokens: 80,
      response_format: { type: 'json_schema', json_schema: { name: 'pet', schema: PET } },
    });
    const stats = engine.stats();
    return { tokenIds: r.tessera.tokenIds, json: j.choices[0].message.content, encoderMode: stats.encoder.mode, backend: stats.device.backend };
  } finally {
    engine.destroy();
  }
}

export default function Page() {
  const [out, setOut] = useState('running');
  useEffect(() => {
    answer()
      .catch((e) => ({ error: { name: e.name, message: e.message } }))
      .then((outcome) => {
        window.consumer = outcome;
        setOut(JSON.stringify(outcome));
      });
  }, []);
  return <pre id="out">{out}</pre>;
}
