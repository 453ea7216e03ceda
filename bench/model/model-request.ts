// The one request `npm run bench:model` measures: public/sample.png and a fixed prompt, greedy (ours also
// sampled with BENCH_SAMPLING). Shared by the Node runner, the Node engine run and the browser page (no Node
// imports here).

export const BENCH_PROMPT = 'Can you describe this image?';
/** Relative to the repository root. */
export const BENCH_IMAGE = 'public/sample.png';

/** The sampled request's settings (the goal: sampling costs at most 10% of greedy decode). */
export const BENCH_SAMPLING = { temperature: 0.7, top_k: 50, top_p: 0.9, seed: 1234 } as const;

/** <model>/bench-input/input.json, written by bench/model/model-inputs.ts from our processor's output. */
export interface BenchInput {
  prompt: string;
  image: string;
  inputIds: number[];
  numTiles: number;
  /** [numTiles, 3, H, W] of pixel_values.f32 */
  pixelShape: number[];
  imageTokens: number;
}

export function benchMessages(image: Uint8Array) {
  return [
    {
      role: 'user' as const,
      content: [
        { type: 'image' as const, image },
        { type: 'text' as const, text: BENCH_PROMPT },
      ],
    },
  ];
}
