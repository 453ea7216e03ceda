// GGUF checkpoints (model .gguf + mmproj .gguf, as llama.cpp's converter lays them out: scripts/gguf-convert.ts
// writes them with the repository's own writer) load through families/gguf-checkpoint.ts:
//   F32                        the safetensors checkpoint's values: identical tokens and log probabilities
//   Q8_0, Q4_K_M               held as they are (q8; Q4_K_M's q4k and q6k, its fusion of Q4_K q/k with a
//                              Q6_K v as a q4k and a q6k part of rows)
//   Q5_0                       widened to f32 (no packed format holds it)
// each answering as the f32 checkpoint of the GGUF's float64 dequantization (gguf-blocks.ts): tokens equal
// wherever that checkpoint's top two are apart by more than the kernels' rounding (identical when f32).
// Also: their metadata reads back through @huggingface/gguf, their tokenizer and config are the original's,
// and `tessera run --model x.gguf` (its mmproj found beside it) and an engine encoding in a worker answer as
// the engine does. Q4_0/Q4_1
// repacking: test/unit/gguf-repack.test.ts; q5k and every kernel on K-quants: test/gpu/k-quants.test.ts.

import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { gguf as parseGguf } from '@huggingface/gguf';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NonFiniteWeightError, UnsupportedModelError } from '../../src/errors';
import { openGgufCheckpoint } from '../../src/families/gguf-checkpoint';
import { readModelConfig } from '../../src/families/read-config';
import { NodeDirSource } from '../../src/io/model-source-node';
import { weightFormatOf } from '../../src/kernels/weight-format';
import { dequantizeGgml } from '../../src/model/weights/gguf/gguf-blocks';
import { openGguf } from '../../src/model/weights/gguf/gguf-reader';
import { TextTokenizer } from '../../src/processor/tokenizer';
import { type ConvertType, convertIdefics3ToGguf } from '../../scripts/gguf-convert';
import { copyCheckpointWith } from '../helpers/checkpoint-copy';
import { askAboutSample } from '../helpers/ask-sample';
import { testEngine } from '../helpers/engine';
import { expectAnswerWithin } from '../helpers/gguf-answers';
import { runBuiltCli } from '../helpers/serve-process';
import { ensureTinyModels } from '../helpers/tiny-models';
import { useGpu } from './gpu';

const gpu = useGpu();
let scratch: string;
const tiny = () => `${ensureTinyModels()}/smolvlm-tiny`;
const options = { kvCacheTokens: 512, maxTokensPerStep: 64, maxSeqs: 2 } as const;
const SAMPLE = resolve(import.meta.dirname, '../../public/sample.png');

beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), 'tessera-gguf-'));
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

async function convert(type: ConvertType, checkpoint = tiny()) {
  const out = join(scratch, `${checkpoint.split('/').at(-1)}-${type}`);
  mkdirSync(out, { recursive: true });
  const files = await convertIdefics3ToGguf(checkpoint, out, type);
  return { out, files, source: await openGgufCheckpoint(new NodeDirSource(out), files) };
}

describe('a SmolVLM GGUF pair', () => {
  it('reads back through @huggingface/gguf with the metadata, types and shapes written', async () => {
    const { out, files } = await convert('Q8_0');
    for (const file of [files.model, files.mmproj]) {
      const bytes = new Uint8Array(readFileSync(join(out, file)));
      const ours = (await openGguf(chunks(bytes), file)).header;
      const theirs = await parseGguf(join(out, file), { allowLocalFile: true });
      expect(theirs.tensorInfos.map((t) => [t.name, t.dtype, t.shape.map(Number)])).toEqual(
        [...ours.tensors.values()].map((t) => [t.name, t.type.code, t.ne]),
      );
      for (const [key, value] of ours.metadata) {
        const v = (theirs.metadata as Record<string, unknown>)[key];
        if (typeof value === 'number' && !Number.isInteger(value)) expect(v).toBeCloseTo(value, 6);
        else expect(v).toEqual(value);
      }
    }
  });

  it('stands for the same config and tokenizer as the checkpoint it came from', async () => {
    const { source } = await convert('F32');
    const mine = await readModelConfig(source);
    const original = await readModelConfig(new NodeDirSource(tiny()));
    expect(mine.text).toEqual(original.text);
    expect(mine.vision).toEqual(original.vision);
    const [a, b] = [await TextTokenizer.load(source), await TextTokenizer.load(new NodeDirSource(tiny()))];
    for (const text of [
      'Can you describe this image?',
      '<|im_start|>User:<image>12345 héllo\n\n  world<end_of_utterance>',
      'Assistant: 3.14 ✓',
    ]) {
      const ids = b.encodeSegments([{ text, trusted: true }]).ids;
      expect(a.encodeSegments([{ text, trusted: true }]).ids).toEqual(ids);
      expect(a.decode(ids, false)).toEqual(b.decode(ids, false));
      expect(a.decode(ids, true)).toEqual(b.decode(ids, true));
    }
  });

  it('F32: answers with the same tokens and log probabilities as the safetensors checkpoint', async () => {
    const { source } = await convert('F32');
    const a = await testEngine(gpu(), tiny(), options);
    const b = await testEngine(gpu(), tiny(), { ...options, source });
    try {
      const [ra, rb] = [await askAboutSample(a, 8), await askAboutSample(b, 8)];
      expect(rb.tessera.tokenIds).toEqual(ra.tessera.tokenIds);
      expect(rb.choices[0].logprobs!.content!.map((l) => l.logprob)).toEqual(ra.choices[0].logprobs!.content!.map((l) => l.logprob));
    } finally {
      a.destroy();
      b.destroy();
    }
  });

  it('F32 with its media tower in an encoder worker (the pair opened again by reference): the same tokens', async () => {
    const { out, source } = await convert('F32');
    const a = await testEngine(gpu(), tiny(), options);
    const w = await testEngine(gpu(), out, { ...options, source, workers: true });
    try {
      expect((await askAboutSample(w, 8)).tessera.tokenIds).toEqual((await askAboutSample(a, 8)).tessera.tokenIds);
      expect(w.stats().encoder.mode).toBe('workers');
    } finally {
      a.destroy();
      w.destroy();
    }
  });

  // smolvlm-tiny's rows (192 values) are not whole K-quant blocks: the K-quants run on smolvlm-tiny-hd128
  // (text hidden 256); its mmproj is F16, as llama.cpp writes the mmproj beside a Q4_K_M model.
  it.each([
    ['Q8_0', 'smolvlm-tiny', 'q8'],
    ['Q5_0', 'smolvlm-tiny', 'f32'],
    ['Q4_K_M', 'smolvlm-tiny-hd128', 'q4k'],
  ] as const)(
    '%s (%s): answers as the f32 checkpoint of its dequantized values',
    async (type, name, format) => {
      const checkpoint = `${ensureTinyModels()}/${name}`;
      const { out, files, source } = await convert(type, checkpoint);
      // The reference checkpoint: every tensor the GGUF pair holds, dequantized in float64 (exact in f32),
      // under its HF name and in HF row order, in place of the original's values.
      const values = new Map<string, Float32Array>();
      for (const f of source.gguf.files) {
        const g = await openGguf(chunks(new Uint8Array(readFileSync(join(out, f.file)))), f.file);
        for await (const { info, bytes } of g.tensors) {
          const ref = f.tensors.get(info.name);
          if (!ref) continue;
          const v = Float32Array.from(
            dequantizeGgml(
              info.type,
              bytes,
              info.shape.reduce((x, y) => x * y, 1),
            ),
          );
          values.set(ref.hfName, ref.unpermuteHeads ? unpermute(v, info.shape[0], ref.unpermuteHeads) : v);
        }
      }
      const reference = await copyCheckpointWith(checkpoint, join(scratch, `${name}-${type}-dequantized`), values);
      const a = await testEngine(gpu(), reference, options);
      const b = await testEngine(gpu(), out, { ...options, source });
      try {
        if (b.model.backend !== 'webgpu') throw new Error('not on WebGPU');
        // Held as they are; Q5_0 has no packed format here: widened to f32 (exact). In Q4_K_M, q and k are
        // Q4_K and v is Q6_K: their fused weight is a q4k part (q and k) and a q6k part (v); o is Q4_K, down Q6_K.
        expect(weightFormatOf(b.model.weights.matrix('text.layers.0.o'))).toBe(format);
        const t = b.model.config.text;
        const qk = (t.numHeads + t.numKvHeads) * t.headDim;
        expect(b.model.weights.rowParts('text.layers.0.qkv').map((p) => [p.first, p.rows, weightFormatOf(p.weight)])).toEqual(
          type === 'Q4_K_M'
            ? [
                [0, qk, 'q4k'],
                [qk, t.numKvHeads * t.headDim, 'q6k'],
              ]
            : [[0, qk + t.numKvHeads * t.headDim, format]],
        );
        if (type === 'Q4_K_M') expect(weightFormatOf(b.model.weights.matrix('text.layers.0.down'))).toBe('q6k');
        const [ra, rb] = [await askAboutSample(a, 8), await askAboutSample(b, 8)];
        if (format === 'f32') {
          // The same values through the same kernels.
          expect(rb.tessera.tokenIds).toEqual(ra.tessera.tokenIds);
          expect(rb.choices[0].logprobs!.content!.map((l) => l.logprob)).toEqual(ra.choices[0].logprobs!.content!.map((l) => l.logprob));
        }
        expectAnswerWithin(ra, rb);
        if (type === 'Q8_0') {
          // The built command on the same files: the model file, its mmproj found beside it.
          const { stdout } = await runBuiltCli([
            'run',
            '--model',
            join(out, files.model),
            '--image',
            SAMPLE,
            '--prompt',
            'Can you describe this image?',
            '--max-tokens',
            '8',
            '--device',
            'webgpu',
          ]);
          expect(stdout.trim()).toBe(rb.choices[0].message.content!.trim());
        }
      } finally {
        a.destroy();
        b.destroy();
      }
    },
    300_000,
  );

  it('a NaN block scale is NonFiniteWeightError naming the tensor, its first bad value and how many', async () => {
    const { out, files } = await convert('Q8_0');
    const path = join(out, files.model);
    const bytes = new Uint8Array(readFileSync(path));
    const { header } = await openGguf(chunks(bytes), files.model);
    const info = header.tensors.get('blk.0.ffn_down.weight')!;
    // Q8_0 blocks are 34 bytes, its f16 scale first: blocks 3 and 5 get NaN (0x7e00) scales.
    for (const block of [3, 5]) bytes.set([0x00, 0x7e], header.dataOffset + info.offset + block * 34);
    writeFileSync(path, bytes);
    const source = await openGgufCheckpoint(new NodeDirSource(out), files);
    const error = await testEngine(gpu(), out, { ...options, source }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NonFiniteWeightError);
    expect((error as Error).message).toContain('model.text_model.layers.0.mlp.down_proj.weight');
    expect([(error as NonFiniteWeightError).index, (error as NonFiniteWeightError).numNonFinite]).toEqual([3 * 32, 2 * 32]);
  });

  it('names what is wrong: no mmproj, or the mmproj given as the model', async () => {
    const { out, files } = await convert('F16');
    await expect(openGgufCheckpoint(new NodeDirSource(out), { model: files.model })).rejects.toThrow(
      /no model family reads the GGUF pair .*mmproj: none.*each with its mmproj/,
    );
    await expect(openGgufCheckpoint(new NodeDirSource(out), { model: files.mmproj })).rejects.toBeInstanceOf(UnsupportedModelError);
  });
});

async function* chunks(bytes: Uint8Array) {
  yield bytes;
}

/** Stored rows (llama.cpp's order) back to HF's: within each head of D rows, stored 2i + j is HF j·D/2 + i. */
function unpermute(v: Float32Array, rows: number, heads: number): Float32Array {
  const K = v.length / rows;
  const D = rows / heads;
  const out = new Float32Array(v.length);
  for (let r = 0; r < rows; r++) {
    const h = Math.floor(r / D);
    const s = r % D;
    out.set(v.subarray(r * K, (r + 1) * K), (h * D + (s % 2) * (D / 2) + Math.floor(s / 2)) * K);
  }
  return out;
}
