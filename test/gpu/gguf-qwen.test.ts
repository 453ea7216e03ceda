// Qwen2.5-VL and Qwen3-VL GGUF pairs (model .gguf + mmproj .gguf as llama.cpp's converter writes them:
// scripts/gguf-convert-qwen.ts) load through their families' GgufFamily and answer as the checkpoint they
// hold. A GGUF pair carries no window size or pixel budget (llama.cpp assumes the public checkpoints'), so
// each tiny checkpoint is first copied with those values, and that copy is the reference:
//   F32    the same values: identical tokens and log probabilities (the converter's split qkv put back
//          together, the Conv3d's two temporal taps joined, DeepStack mergers found by their tower layer)
//   Q8_0   (Qwen2.5-VL) held as q8: the same answer as the f32 checkpoint of the file's float64 dequantization, tokens
//          equal wherever that checkpoint's top two are apart by more than the kernels' rounding
// and the config (decoder, tower, M-RoPE sections) and tokenizer read from the files equal the copy's.

import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openGgufCheckpoint } from '../../src/families/gguf-checkpoint';
import { readModelConfig } from '../../src/families/read-config';
import { NodeDirSource } from '../../src/io/model-source-node';
import { weightFormatOf } from '../../src/kernels/weight-format';
import { dequantizeGgml } from '../../src/model/weights/gguf/gguf-blocks';
import { openGguf } from '../../src/model/weights/gguf/gguf-reader';
import { TextTokenizer } from '../../src/processor/tokenizer';
import { convertQwenToGguf } from '../../scripts/gguf-convert-qwen';
import { askAboutSample } from '../helpers/ask-sample';
import { copyCheckpointWith } from '../helpers/checkpoint-copy';
import { testEngine } from '../helpers/engine';
import { expectAnswerWithin } from '../helpers/gguf-answers';
import { ensureTinyModels } from '../helpers/tiny-models';
import { useGpu } from './gpu';

const gpu = useGpu();
let scratch: string;
const options = { kvCacheTokens: 1024, maxTokensPerStep: 256, maxSeqs: 2 } as const;

beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), 'tessera-gguf-qwen-'));
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const editJson = (dir: string, file: string, edit: (j: Record<string, unknown>) => void) => {
  const j = JSON.parse(readFileSync(join(dir, file), 'utf8'));
  edit(j);
  writeFileSync(join(dir, file), JSON.stringify(j, null, 2));
};

/** The tiny checkpoint with what a GGUF pair cannot carry set as llama.cpp assumes it. */
function representable(name: 'qwen2_5_vl-tiny' | 'qwen3_vl-tiny'): string {
  const dir = join(scratch, `${name}-as-gguf`);
  cpSync(`${ensureTinyModels()}/${name}`, dir, { recursive: true });
  if (name === 'qwen2_5_vl-tiny') {
    editJson(dir, 'config.json', (c) => Object.assign(c.vision_config as object, { window_size: 112, tokens_per_second: 2 }));
    editJson(dir, 'preprocessor_config.json', (p) => Object.assign(p, { min_pixels: 3136, max_pixels: 12845056 }));
  } else {
    editJson(dir, 'preprocessor_config.json', (p) => Object.assign(p, { size: { longest_edge: 16777216, shortest_edge: 65536 } }));
  }
  return dir;
}

async function* once(bytes: Uint8Array) {
  yield bytes;
}

// Q8_0 on one family: the quantized path is the families' common loader (test/gpu/gguf.test.ts has more types).
describe.each([
  ['qwen2_5_vl-tiny', true],
  ['qwen3_vl-tiny', false],
] as const)('%s as a GGUF pair', (name, withQ8) => {
  let reference: string;
  beforeAll(() => {
    reference = representable(name);
  });
  const convert = async (type: 'F32' | 'Q8_0') => {
    const out = join(scratch, `${name}-${type}`);
    mkdirSync(out, { recursive: true });
    const files = await convertQwenToGguf(reference, out, type);
    return { out, source: await openGgufCheckpoint(new NodeDirSource(out), files) };
  };

  it('stands for the same config and tokenizer', async () => {
    const { source } = await convert('F32');
    const [mine, theirs] = [await readModelConfig(source), await readModelConfig(new NodeDirSource(reference))];
    expect(mine.family).toBe(theirs.family);
    expect(mine.text).toEqual(theirs.text);
    expect(mine.qwenVision).toEqual(theirs.qwenVision);
    expect(mine.tieWordEmbeddings).toBe(theirs.tieWordEmbeddings);
    const [a, b] = [await TextTokenizer.load(source), await TextTokenizer.load(new NodeDirSource(reference))];
    for (const text of [
      '<|im_start|>user\n<|vision_start|><|image_pad|><|vision_end|>Describe 12 cats ✓<|im_end|>',
      '  héllo\n\nworld  ',
    ]) {
      const ids = b.encodeSegments([{ text, trusted: true }]).ids;
      expect(a.encodeSegments([{ text, trusted: true }]).ids).toEqual(ids);
      expect(a.decode(ids, false)).toEqual(b.decode(ids, false));
    }
  });

  it('F32: answers with the same tokens and log probabilities as the checkpoint', async () => {
    const { source } = await convert('F32');
    const a = await testEngine(gpu(), reference, options);
    const b = await testEngine(gpu(), reference, { ...options, source });
    try {
      const [ra, rb] = [await askAboutSample(a, 6), await askAboutSample(b, 6)];
      expect(rb.tessera.tokenIds).toEqual(ra.tessera.tokenIds);
      expect(rb.choices[0].logprobs!.content!.map((l) => l.logprob)).toEqual(ra.choices[0].logprobs!.content!.map((l) => l.logprob));
    } finally {
      a.destroy();
      b.destroy();
    }
  });

  it.runIf(withQ8)('Q8_0: held as q8, answers as the f32 checkpoint of its dequantized values', async () => {
    const { out, source } = await convert('Q8_0');
    // The GGUF's tensors dequantized in float64 (exact in f32), put back as the HF tensors they are.
    const values = new Map<string, Float32Array>();
    const pieces = new Map<string, Array<{ index: number; axis: number; count: number; v: Float32Array; shape: number[] }>>();
    for (const f of source.gguf.files) {
      const g = await openGguf(once(new Uint8Array(readFileSync(join(out, f.file)))), f.file);
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
        const part = ref.slice ? { ...ref.slice } : ref.rows ? { ...ref.rows, axis: 0 } : undefined;
        if (!part) values.set(ref.hfName, v);
        else pieces.set(ref.hfName, [...(pieces.get(ref.hfName) ?? []), { ...part, v, shape: info.shape }]);
      }
    }
    for (const [hf, parts] of pieces) values.set(hf, join_(parts));
    const dequantized = await copyCheckpointWith(reference, join(scratch, `${name}-Q8_0-dequantized`), values);
    const a = await testEngine(gpu(), dequantized, options);
    const b = await testEngine(gpu(), reference, { ...options, source });
    try {
      if (b.model.backend !== 'webgpu') throw new Error('not on WebGPU');
      expect(weightFormatOf(b.model.weights.matrix('text.layers.0.qkv'))).toBe('q8');
      const [ra, rb] = [await askAboutSample(a, 6), await askAboutSample(b, 6)];
      expectAnswerWithin(ra, rb);
    } finally {
      a.destroy();
      b.destroy();
    }
  });
});

/** Equal parts along an axis put back together (the order the converter cut them in). */
function join_(parts: Array<{ index: number; axis: number; count: number; v: Float32Array; shape: number[] }>): Float32Array {
  const sorted = [...parts].sort((x, y) => x.index - y.index);
  const { axis, shape } = sorted[0];
  const outer = shape.slice(0, axis).reduce((a, b) => a * b, 1);
  const part = sorted[0].v.length / outer;
  const out = new Float32Array(part * outer * sorted.length);
  for (let o = 0; o < outer; o++) {
    sorted.forEach((p, i) => {
      out.set(p.v.subarray(o * part, (o + 1) * part), (o * sorted.length + i) * part);
    });
  }
  return out;
}
