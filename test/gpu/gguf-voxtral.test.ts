// Voxtral GGUF pairs (a `llama` model .gguf + an mmproj .gguf with projector `voxtral`, laid out as
// llama.cpp's converter does: scripts/gguf-convert-voxtral.ts writes them with the repository's writer) load
// through families/gguf-checkpoint.ts and src/families/voxtral/gguf.ts, and answer an audio request on
// voxtral-tiny as the f32 checkpoint of the values the pair holds (dequantized in float64, gguf-blocks.ts):
//   F32    the safetensors checkpoint's values, but for the conv weights, which the converter stores in F16
//          in every file type (checked value for value): identical tokens and log probabilities
//   Q8_0   held as q8: tokens equal wherever the reference's top two are apart by more than the kernels'
//          rounding, log probabilities within 2e-3
// The built command answers the same from the Q8_0 pair (`tessera run --model <x.gguf> --audio`).
// Also: the files read back through @huggingface/gguf; their config (voxtral-tiny, and voxtral-tiny-odd:
// tied, 80 mel bins, 3 frames per token) and tokenizer are the original's. One checkpoint for the answers,
// so that the engines share their compiled pipelines. The Tekken vocabulary against Tessera's tekken.json
// conversion: test/unit/gguf-tokenizer.test.ts.

import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gguf as parseGguf } from '@huggingface/gguf';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../src/engine/engine';
import { openGgufCheckpoint } from '../../src/families/gguf-checkpoint';
import { readModelConfig } from '../../src/families/read-config';
import { NodeDirSource } from '../../src/io/model-source-node';
import { floatToHalf, halfToFloat } from '../../src/kernels/f16';
import { weightFormatOf } from '../../src/kernels/weight-format';
import { dequantizeGgml } from '../../src/model/weights/gguf/gguf-blocks';
import type { GgufModelSource } from '../../src/model/weights/gguf/gguf-plan';
import { openGguf } from '../../src/model/weights/gguf/gguf-reader';
import { TextTokenizer } from '../../src/processor/tokenizer';
import { type ConvertedGguf, type ConvertType, readTensors } from '../../scripts/gguf-convert';
import { convertVoxtralToGguf } from '../../scripts/gguf-convert-voxtral';
import { testClip, wavBytes } from '../helpers/audio-clips';
import { copyCheckpointWith } from '../helpers/checkpoint-copy';
import { testEngine } from '../helpers/engine';
import { runBuiltCli } from '../helpers/serve-process';
import { expectAnswerWithin } from '../helpers/gguf-answers';
import { ensureTinyModels } from '../helpers/tiny-models';
import { useGpu } from './gpu';

const gpu = useGpu();
let scratch: string;
const tiny = (name: string) => `${ensureTinyModels()}/${name}`;
const options = { kvCacheTokens: 1024, maxTokensPerStep: 512, maxSeqs: 1 } as const;
const CLIP = wavBytes(testClip(3, 16000), 16000);

beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), 'tessera-gguf-voxtral-'));
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

interface Converted {
  out: string;
  files: ConvertedGguf;
  source: GgufModelSource;
}
const converted = new Map<string, Promise<Converted>>();

/** The pair for a tiny checkpoint in a file type, written once per test file. */
function convert(type: ConvertType, name: string): Promise<Converted> {
  const key = `${name}-${type}`;
  if (!converted.has(key)) {
    converted.set(
      key,
      (async () => {
        const out = join(scratch, key);
        mkdirSync(out, { recursive: true });
        const files = await convertVoxtralToGguf(tiny(name), out, type);
        return { out, files, source: await openGgufCheckpoint(new NodeDirSource(out), files) };
      })(),
    );
  }
  return converted.get(key)!;
}

const ask = (engine: Engine) =>
  engine.chat.completions.create({
    messages: [
      {
        role: 'user',
        content: [
          { type: 'audio', audio: CLIP },
          { type: 'text', text: 'What is this?' },
        ],
      },
    ],
    max_tokens: 8,
    logprobs: true,
    top_logprobs: 2,
  });

describe('a Voxtral GGUF pair', () => {
  it('reads back through @huggingface/gguf with the metadata, types and shapes written', async () => {
    const { out, files } = await convert('Q8_0', 'voxtral-tiny');
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
    // As the converter stores them: conv weights F16, conv biases [C, 1] in F32, positions F32.
    const mmproj = (await openGguf(chunks(new Uint8Array(readFileSync(join(out, files.mmproj)))), files.mmproj)).header;
    expect(mmproj.tensors.get('a.conv1d.1.weight')).toMatchObject({ shape: [64, 128, 3], type: { name: 'F16' } });
    expect(mmproj.tensors.get('a.conv1d.1.bias')).toMatchObject({ shape: [64, 1], type: { name: 'F32' } });
    expect(mmproj.tensors.get('a.position_embd.weight')).toMatchObject({ shape: [1500, 64], type: { name: 'F32' } });
    expect(mmproj.tensors.get('mm.a.mlp.1.weight')).toMatchObject({ shape: [64, 256], type: { name: 'Q8_0' } });
  });

  it.each([
    ['voxtral-tiny', 'Q8_0'],
    ['voxtral-tiny-odd', 'F32'],
  ] as const)('%s (%s): stands for the same config as the checkpoint it came from', async (name, type) => {
    const { source } = await convert(type, name);
    const mine = await readModelConfig(source);
    const original = await readModelConfig(new NodeDirSource(tiny(name)));
    expect(mine.text).toEqual(original.text);
    expect(mine.audio).toEqual(original.audio);
    expect(mine.tieWordEmbeddings).toBe(original.tieWordEmbeddings);
  });

  it('stands for the same tokenizer as the checkpoint it came from', async () => {
    // Both tiny checkpoints carry Voxtral's tokenizer.json; the vocabulary at large: test/unit/gguf-tokenizer.test.ts.
    const { source } = await convert('Q8_0', 'voxtral-tiny');
    const [a, b] = [await TextTokenizer.load(source), await TextTokenizer.load(new NodeDirSource(tiny('voxtral-tiny')))];
    for (const text of ['What is this?', '[INST][BEGIN_AUDIO][AUDIO][/INST]lang:en[TRANSCRIBE] héllo\n\n  12345 ✓']) {
      const ids = b.encodeSegments([{ text, trusted: true }]).ids;
      expect(a.encodeSegments([{ text, trusted: true }]).ids).toEqual(ids);
      expect(a.decode(ids, false)).toEqual(b.decode(ids, false));
      expect(a.decode(ids, true)).toEqual(b.decode(ids, true));
    }
  });

  it("F32: holds the checkpoint's values and answers an audio request with its tokens and log probabilities", async () => {
    const name = 'voxtral-tiny';
    const converted = await convert('F32', name);
    const held = await heldValues(converted);
    // Every value as the safetensors checkpoint has it, but for the conv weights, which the converter stores
    // in F16 whatever the file type: those of voxtral-tiny's BF16 conv values below f16's normal range round.
    const { values: original, shapes } = await readTensors(tiny(name));
    expect([...held.keys()].sort()).toEqual([...shapes.keys()].sort());
    for (const [hfName, v] of held) {
      const o = original.get(hfName)!;
      const want = /^audio_tower\.conv\d\.weight$/.test(hfName) ? o.map((x) => halfToFloat(floatToHalf(x))) : o;
      expect(
        v.every((x, i) => Object.is(x, want[i])),
        hfName,
      ).toBe(true);
    }
    // So the reference is the safetensors checkpoint with those two tensors as the file holds them.
    const reference = await copyCheckpointWith(tiny(name), join(scratch, `${name}-F32-held`), held);
    const a = await testEngine(gpu(), reference, options);
    const b = await testEngine(gpu(), converted.out, { ...options, source: converted.source });
    try {
      const [ra, rb] = [await ask(a), await ask(b)];
      expect(rb.tessera.tokenIds).toEqual(ra.tessera.tokenIds);
      expect(rb.choices[0].logprobs!.content!.map((l) => l.logprob)).toEqual(ra.choices[0].logprobs!.content!.map((l) => l.logprob));
    } finally {
      a.destroy();
      b.destroy();
    }
  });

  it('Q8_0: answers as the f32 checkpoint of its dequantized values', async () => {
    const name = 'voxtral-tiny';
    const converted = await convert('Q8_0', name);
    const reference = await copyCheckpointWith(tiny(name), join(scratch, `${name}-Q8_0-dequantized`), await heldValues(converted));
    const a = await testEngine(gpu(), reference, options);
    const b = await testEngine(gpu(), converted.out, { ...options, source: converted.source });
    try {
      if (b.model.backend !== 'webgpu') throw new Error('not on WebGPU');
      // The decoder's weights (the audio tower loads apart, in the engine's encoder, by the same code).
      for (const key of ['text.layers.0.o', 'text.layers.0.qkv', 'text.layers.0.down'])
        expect(weightFormatOf(b.model.weights.matrix(key)), key).toBe('q8');
      const [ra, rb] = [await ask(a), await ask(b)];
      expectAnswerWithin(ra, rb);
      // The built command on the same files: the model file, its mmproj found beside it, the clip as a WAV.
      const wav = join(scratch, 'clip.wav');
      writeFileSync(wav, CLIP);
      const { stdout } = await runBuiltCli([
        'run',
        '--model',
        join(converted.out, converted.files.model),
        '--audio',
        wav,
        '--prompt',
        'What is this?',
        '--max-tokens',
        '8',
        '--device',
        'webgpu',
      ]);
      expect(stdout.trim()).toBe(rb.choices[0].message.content!.trim());
    } finally {
      a.destroy();
      b.destroy();
    }
  }, 300_000);

  it('without its mmproj, no family reads the model file, and the error names Voxtral among the readers', async () => {
    const { out, files } = await convert('Q8_0', 'voxtral-tiny');
    await expect(openGgufCheckpoint(new NodeDirSource(out), { model: files.model })).rejects.toThrow(
      /no model family reads the GGUF pair .*mmproj: none.*GGUF checkpoints of .*voxtral/,
    );
  });
});

async function* chunks(bytes: Uint8Array) {
  yield bytes;
}

/**
 * Every tensor the pair holds, dequantized in float64 (exact in f32), under its HF name and in HF row order:
 * the values of the f32 checkpoint a GGUF load must answer as.
 */
async function heldValues({ out, source }: Converted): Promise<Map<string, Float32Array>> {
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
  return values;
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
