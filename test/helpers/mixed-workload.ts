// A deterministic mix of requests for the concurrency tests (Node and Chromium): images of several sizes
// (so several tile counts), text-only prompts, prompts of different lengths, greedy and seeded sampling,
// different max_tokens. Images are named by index; each environment draws its own (sharp / canvas).

export interface MixedSpec {
  /** Image index (0 = the sample photo), or undefined for a text-only prompt. */
  image?: number;
  text: string;
  maxTokens: number;
  temperature?: number;
  topP?: number;
  topK?: number;
  seed?: number;
}

const QUESTIONS = [
  'Can you describe this image?',
  'What is in the picture?',
  'List the colours you see, then say which one covers most of the image and why you think so.',
  'Hi',
  'Write one short sentence about it.',
];

export function mixedWorkload(n: number): MixedSpec[] {
  return Array.from({ length: n }, (_, i) => {
    const spec: MixedSpec = {
      image: i % 4 === 3 ? undefined : i % 5,
      text: QUESTIONS[i % QUESTIONS.length] + (i % 3 === 0 ? ` (request ${i})` : ''),
      maxTokens: 4 + (i % 7),
    };
    if (i % 3 === 1) Object.assign(spec, { temperature: 0.7 + (i % 4) * 0.2, topP: 0.9, topK: 40, seed: 1000 + i });
    return spec;
  });
}

/** The OpenAI-style content of a spec, given the bytes of its image. */
export function specContent(spec: MixedSpec, image: Uint8Array | undefined) {
  return image
    ? [
        { type: 'image' as const, image },
        { type: 'text' as const, text: spec.text },
      ]
    : [{ type: 'text' as const, text: spec.text }];
}

export function specRequest(spec: MixedSpec, image: Uint8Array | undefined) {
  return {
    messages: [{ role: 'user' as const, content: specContent(spec, image) }],
    max_tokens: spec.maxTokens,
    temperature: spec.temperature,
    top_p: spec.topP,
    top_k: spec.topK,
    seed: spec.seed,
  };
}
