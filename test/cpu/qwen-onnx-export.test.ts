// The tiny Qwen-VL checkpoints' ONNX exports (scripts/make-tiny-onnx.ts: qwen-vision-onnx.ts, qwen-onnx.ts),
// graph by graph on onnxruntime-node, against the repository's float64 references:
//   - vision_encoder.onnx against test/reference/qwen_vision.py (qwen-vision.json): features and each
//     DeepStack level for every case (whole and partial windows, t = 2 videos, grids smaller, larger and
//     equal to Qwen3-VL's learned position grid), and two images of different grids in one call equal to
//     the two calls apart;
//   - embed_tokens.onnx + decoder_model_merged.onnx against test/reference/qwen_decoder.py
//     (qwen-decoder.json): its spliced media rows, M-RoPE positions and DeepStack rows, a prefill then
//     greedy steps with the K/V cache as transformers.js drives them; the tokens and every step's top logits.

import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import * as ort from 'onnxruntime-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureTinyModels } from '../helpers/tiny-models';

const goldens = resolve(import.meta.dirname, '../fixtures/goldens');

interface VisionCase {
  name: string;
  grid: { t: number; h: number; w: number };
  patches: { offset: number; length: number };
  features: number[];
  deepstack: number[][];
}
const vision = JSON.parse(readFileSync(join(goldens, 'qwen-vision.json'), 'utf8')) as {
  models: Array<{ checkpoint: string; cases: VisionCase[] }>;
};
const patchRows = new Float32Array(Uint8Array.from(readFileSync(join(goldens, 'qwen-vision-patches.f32.bin'))).buffer);

interface DecoderCase {
  name: string;
  ids: number[];
  positions: number[][];
  delta: number;
  media: number[];
  deepstack: number[][];
  tokens: number[];
  stepTop: Array<{ ids: number[]; logits: number[] }>;
  f32VsF64MaxAbsDiff: number;
}
const decoder = JSON.parse(readFileSync(join(goldens, 'qwen-decoder.json'), 'utf8')) as {
  maxNew: number;
  models: Array<{ checkpoint: string; cases: DecoderCase[] }>;
};
/** <|image_pad|>, <|video_pad|>. */
const PADS = new Set([151655, 151656]);

const maxDiff = (got: Float32Array, want: ArrayLike<number>) => {
  expect(got.length).toBe(want.length);
  let worst = 0;
  for (let i = 0; i < got.length; i++) worst = Math.max(worst, Math.abs(got[i]! - want[i]!));
  return worst;
};

const session = (name: string, graph: string) => ort.InferenceSession.create(join(ensureTinyModels(), name, 'onnx', `${graph}.onnx`));

describe.each(vision.models.map((m) => [m.checkpoint, m.cases] as const))('%s vision_encoder.onnx', (name, cases) => {
  let s: ort.InferenceSession;
  beforeAll(async () => {
    s = await session(name, 'vision_encoder');
  });
  afterAll(() => s?.release());
  const run = async (list: readonly VisionCase[]) => {
    const width = list[0]!.patches.length / (list[0]!.grid.t * list[0]!.grid.h * list[0]!.grid.w);
    const rows = list.reduce((n, c) => n + c.patches.length / width, 0);
    const pixels = new Float32Array(rows * width);
    let at = 0;
    for (const c of list) {
      pixels.set(patchRows.subarray(c.patches.offset, c.patches.offset + c.patches.length), at);
      at += c.patches.length;
    }
    const out = await s.run({
      pixel_values: new ort.Tensor('float32', pixels, [rows, width]),
      image_grid_thw: new ort.Tensor('int64', BigInt64Array.from(list.flatMap((c) => [c.grid.t, c.grid.h, c.grid.w].map(BigInt))), [
        list.length,
        3,
      ]),
    });
    return { features: out.image_features!.data as Float32Array, deepstack: out.deepstack_features?.data as Float32Array | undefined };
  };

  it.each(cases.map((c) => [c.name, c] as const))('%s: features and DeepStack levels within 1e-4 of float64', async (_, c) => {
    const got = await run([c]);
    expect(maxDiff(got.features, c.features)).toBeLessThan(1e-4);
    const n = c.features.length;
    expect(got.deepstack?.length ?? 0).toBe(n * c.deepstack.length);
    for (const [i, level] of c.deepstack.entries()) {
      expect(maxDiff(got.deepstack!.subarray(i * n, (i + 1) * n), level), `level ${i}`).toBeLessThan(1e-4);
    }
  });

  it('two images of different grids in one call give what each gives alone', async () => {
    const [a, b] = [cases[0]!, cases[cases.length - 1]!];
    const [ra, rb, both] = [await run([a]), await run([b]), await run([a, b])];
    expect(both.features).toEqual(Float32Array.from([...ra.features, ...rb.features]));
    const levels = a.deepstack.length;
    const [na, nb] = [ra.features.length, rb.features.length];
    for (let l = 0; l < levels; l++) {
      expect(both.deepstack!.subarray(l * (na + nb), (l + 1) * (na + nb))).toEqual(
        Float32Array.from([...ra.deepstack!.subarray(l * na, (l + 1) * na), ...rb.deepstack!.subarray(l * nb, (l + 1) * nb)]),
      );
    }
  });
});

describe.each(decoder.models.map((m) => [m.checkpoint, m.cases] as const))(
  '%s embed_tokens.onnx + decoder_model_merged.onnx',
  (name, cases) => {
    let embed: ort.InferenceSession;
    let dec: ort.InferenceSession;
    let config: Record<string, any>;
    beforeAll(async () => {
      [embed, dec] = [await session(name, 'embed_tokens'), await session(name, 'decoder_model_merged')];
      config = JSON.parse(readFileSync(join(ensureTinyModels(), name, 'config.json'), 'utf8'));
    });
    afterAll(() => Promise.all([embed?.release(), dec?.release()]));

    it.each(cases.map((c) => [c.name, c] as const))('%s: the greedy tokens, and every step top logits within 1e-4', async (_, c) => {
      const t = config.text_config ?? config;
      const [layers, kvHeads, d] = [t.num_hidden_layers, t.num_key_value_heads, t.hidden_size];
      const hd = t.head_dim ?? d / t.num_attention_heads;
      const levels = (config.vision_config.deepstack_visual_indexes ?? []).length;
      expect(dec.inputNames.includes('deepstack_visual_embeds')).toBe(levels > 0);
      const pads = c.ids.flatMap((id, i) => (PADS.has(id) ? [i] : []));
      let past: Record<string, ort.Tensor> = {};
      for (let i = 0; i < layers; i++)
        for (const k of ['key', 'value'])
          past[`past_key_values.${i}.${k}`] = new ort.Tensor('float32', new Float32Array(0), [1, kvHeads, 0, hd]);
      let ids = c.ids;
      let total = 0;
      const tokens: number[] = [];
      let worst = 0;
      for (let step = 0; step < decoder.maxNew; step++) {
        const S = ids.length;
        const rows = await embed.run({ input_ids: new ort.Tensor('int64', BigInt64Array.from(ids.map(BigInt)), [1, S]) });
        const x = Float32Array.from(rows.inputs_embeds!.data as Float32Array);
        const deep = new Float32Array(levels * S * d);
        if (step === 0) {
          pads.forEach((p, r) => {
            x.set(c.media.slice(r * d, (r + 1) * d), p * d);
            for (const [l, level] of c.deepstack.entries()) deep.set(level.slice(r * d, (r + 1) * d), (l * S + p) * d);
          });
        }
        total += S;
        // The prompt's own positions, then index + delta on all three rows (HF get_rope_index).
        const positions = BigInt64Array.from({ length: 3 * S }, (_, k) =>
          BigInt(step === 0 ? c.positions[Math.floor(k / S)]![k % S]! : total - 1 + c.delta),
        );
        const out = await dec.run({
          inputs_embeds: new ort.Tensor('float32', x, [1, S, d]),
          attention_mask: new ort.Tensor('int64', new BigInt64Array(total).fill(1n), [1, total]),
          position_ids: new ort.Tensor('int64', positions, [3, 1, S]),
          num_logits_to_keep: new ort.Tensor('int64', BigInt64Array.of(1n), []),
          ...(levels > 0 ? { deepstack_visual_embeds: new ort.Tensor('float32', deep, [levels, 1, S, d]) } : {}),
          ...past,
        });
        const logits = out.logits!.data as Float32Array;
        expect(logits.length).toBe(t.vocab_size);
        let best = 0;
        for (let v = 1; v < logits.length; v++) if (logits[v]! > logits[best]!) best = v;
        c.stepTop[step]!.ids.forEach((id, k) => {
          worst = Math.max(worst, Math.abs(logits[id]! - c.stepTop[step]!.logits[k]!));
        });
        tokens.push(best);
        past = {};
        for (let i = 0; i < layers; i++) for (const k of ['key', 'value']) past[`past_key_values.${i}.${k}`] = out[`present.${i}.${k}`]!;
        ids = [best];
      }
      expect(tokens).toEqual(c.tokens);
      expect(worst).toBeLessThan(1e-4);
    });
  },
);
