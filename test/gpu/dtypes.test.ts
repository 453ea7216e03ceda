// Weight dtypes end to end: which weights get which format, the memory they take, stored quantized
// copies (written after the first load, read by the next, rebuilt when stale or damaged, never used
// then), and the bad inputs: an unknown dtype, f16 math on an adapter without shader-f16.

import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { UnknownDtypeError } from '../../src/errors';
import { NodeDirSource } from '../../src/io/model-source-node';
import { isPacked, type Weight } from '../../src/kernels/weight-format';
import { loadModel } from '../../src/families/load';
import type { LoadedModel } from '../../src/model/load';
import { chooseComputePrecision, parseDtypeText, resolveDtype } from '../../src/model/weights/dtype';
import { DirWeightStore } from '../../src/model/weights/store-node';
import { testEngine } from '../helpers/engine';
import { ensureTinyModels } from '../helpers/tiny-models';
import { useGpu } from './gpu';

const gpu = useGpu();
let tiny: string;
let scratch: string;

beforeAll(() => {
  tiny = ensureTinyModels();
  scratch = mkdtempSync(join(tmpdir(), 'tessera-dtypes-'));
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const load = (dir: string, options: Parameters<typeof loadModel>[2] = {}) =>
  loadModel(gpu(), new NodeDirSource(dir), { kvCacheTokens: 64, maxTokensPerStep: 16, ...options });

/** Every GPU weight's bytes (data and scales), to compare two loads exactly. */
async function snapshot(m: LoadedModel): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const spec of m.weights.layout.gpu) {
    const w: Weight = m.weights.matrix(spec.key);
    const parts = isPacked(w) ? [w.data, ...(w.scales ? [w.scales] : [])] : [w];
    const bytes = await Promise.all(parts.map(async (t) => Buffer.from((await gpu().read(t)).buffer).toString('base64')));
    out.set(spec.key, bytes.join('|'));
  }
  return out;
}

describe('dtype plans', () => {
  it('formats per weight: matrices packed, norms and biases f32, per part', async () => {
    const m = await load(`${tiny}/smolvlm-tiny`, { dtype: { vision: 'f16', text: 'q4' } });
    try {
      const fmt = (k: string) => {
        const w = m.weights.matrix(k);
        return isPacked(w) ? w.format : 'f32';
      };
      expect(fmt('vision.layers.0.qkv.w')).toBe('f16');
      expect(fmt('vision.patch.w')).toBe('f16');
      expect(fmt('vision.pos')).toBe('f16');
      expect(fmt('connector.w')).toBe('f16');
      expect(fmt('vision.layers.0.qkv.b')).toBe('f32');
      expect(fmt('text.layers.1.gate_up')).toBe('q4');
      expect(fmt('text.embed')).toBe('q4');
      expect(fmt('text.lm_head')).toBe('q4');
      expect(fmt('text.layers.0.ln1')).toBe('f32');
      expect(m.weights.dtype).toEqual({ vision: 'f16', audio: 'f32', text: 'q4' });
    } finally {
      m.destroy();
    }
  });

  it('a BF16 checkpoint under f32 keeps its matrices as bf16: half the bytes, exactly the values', async () => {
    const m = await load(`${tiny}/smolvlm-tiny`, { dtype: 'f32' }); // BF16 tensors
    const f16Source = await load(`${tiny}/smolvlm-tiny-tied`, { dtype: 'f32' }); // F16 tensors: stored as f32
    try {
      const fmt = (mm: LoadedModel, k: string) => {
        const w = mm.weights.matrix(k);
        return isPacked(w) ? w.format : 'f32';
      };
      for (const k of ['vision.layers.0.qkv.w', 'vision.patch.w', 'connector.w', 'text.layers.1.gate_up', 'text.embed', 'text.lm_head']) {
        expect(fmt(m, k)).toBe('bf16');
      }
      expect(fmt(m, 'text.layers.0.ln1')).toBe('f32');
      expect(fmt(f16Source, 'text.layers.1.gate_up')).toBe('f32');
      expect(m.weights.dtype).toEqual({ vision: 'f32', audio: 'f32', text: 'f32' });
      // The fused q|k|v rows hold the checkpoint's BF16 bytes as they are.
      const file = readFileSync(`${tiny}/smolvlm-tiny/model.safetensors`);
      const headerLength = Number(file.readBigUInt64LE(0));
      const header = JSON.parse(file.subarray(8, 8 + headerLength).toString('utf8'));
      const w = m.weights.matrix('text.layers.0.qkv');
      if (!isPacked(w)) throw new Error('expected bf16');
      const gpuBytes = Buffer.from((await gpu().read(w.data)).buffer);
      let offset = 0;
      for (const part of ['q_proj', 'k_proj', 'v_proj']) {
        const info = header[`model.text_model.layers.0.self_attn.${part}.weight`];
        expect(info.dtype).toBe('BF16');
        const [begin, end] = info.data_offsets as [number, number];
        const src = file.subarray(8 + headerLength + begin, 8 + headerLength + end);
        expect(gpuBytes.subarray(offset, offset + src.length).equals(src)).toBe(true);
        offset += src.length;
      }
    } finally {
      m.destroy();
      f16Source.destroy();
    }
  });

  it('GPU weight memory per dtype (q4 at most 35% of f32)', async () => {
    const bytes: Record<string, number> = {};
    for (const dtype of ['f32', 'f16', 'q8', 'q4'] as const) {
      // An F16 checkpoint: under f32 its matrices are f32 (a BF16 one would keep bf16 values, half the size).
      const m = await load(`${tiny}/smolvlm-tiny-tied`, { dtype });
      bytes[dtype] = m.weights.sizeBytes;
      m.destroy();
    }
    expect(bytes.f16 / bytes.f32).toBeLessThan(0.51);
    expect(bytes.q8 / bytes.f32).toBeLessThan(0.3);
    expect(bytes.q4 / bytes.f32).toBeLessThan(0.35);
  });

  it('an unknown dtype is a named error listing the valid ones', async () => {
    for (const dtype of ['int3', 'fp16', { text: 'q2' }, { speech: 'q4' }] as const) {
      const err = await load(`${tiny}/smolvlm-tiny`, { dtype: dtype as never }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(UnknownDtypeError);
      expect((err as Error).name).toBe('UnknownDtypeError');
      expect((err as Error).message).toContain('use one of f32, f16, q8, q4');
    }
    expect(() => parseDtypeText('vision=f16,text=q3')).toThrowError(/--dtype text: unknown weight dtype "q3"; use one of f32, f16, q8, q4/);
    expect(parseDtypeText('vision=f16,text=q4')).toEqual({ vision: 'f16', text: 'q4' });
    expect(resolveDtype('q8')).toEqual({ vision: 'q8', audio: 'q8', text: 'q8' });
  });
});

describe('f16 math', () => {
  it('is chosen only when the device has shader-f16, and only when asked for', () => {
    expect(chooseComputePrecision(new Set(['shader-f16']), 'f16')).toEqual({ precision: 'f16' });
    expect(chooseComputePrecision(new Set(['shader-f16']), 'f32')).toEqual({ precision: 'f32' });
    expect(chooseComputePrecision(new Set(['shader-f16']))).toEqual({ precision: 'f32' });
    const without = chooseComputePrecision(new Set(['subgroups']), 'f16');
    expect(without.precision).toBe('f32');
    expect(without.fallback).toMatch(/shader-f16/);
    expect(() => chooseComputePrecision(new Set(), 'bf16')).toThrowError(UnknownDtypeError);
  });

  it('without shader-f16 falls back to f32 math with exactly one warning', async () => {
    expect(gpu().hasFeature('shader-f16')).toBe(false); // SwiftShader; on a GPU with it this test has nothing to check
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    try {
      const m = await load(`${tiny}/smolvlm-tiny`, { dtype: 'f16', compute: 'f16' });
      const w = m.weights.matrix('text.layers.0.qkv');
      m.destroy();
      expect(isPacked(w) && w.f16Math).toBe(false);
      expect(warn).toHaveBeenCalledTimes(1);
      expect(String(warn.mock.calls[0][0])).toMatch(/compute 'f16' needs the adapter feature shader-f16/);
    } finally {
      warn.mockRestore();
    }
  });
});

describe('engine', () => {
  it('createEngine({ dtype }) reaches the language model and the encoder; stored copies of both parts are reused', async () => {
    const cacheDir = join(scratch, 'engine-cache');
    const image = readFileSync(resolve(import.meta.dirname, '../../public/sample.png'));
    const ask = {
      messages: [
        {
          role: 'user' as const,
          content: [
            { type: 'image' as const, image },
            { type: 'text' as const, text: 'Describe it.' },
          ],
        },
      ],
      max_tokens: 3,
    };
    const f32 = await testEngine(gpu(), `${tiny}/smolvlm-tiny`, { kvCacheTokens: 512, maxTokensPerStep: 128 });
    const a = await f32.chat.completions.create(ask);
    const f32Bytes = f32.stats().weightBytes;
    f32.destroy();
    const stamps: string[] = [];
    for (const expected of ['written', 'read'] as const) {
      const q8 = await testEngine(gpu(), `${tiny}/smolvlm-tiny`, {
        kvCacheTokens: 512,
        maxTokensPerStep: 128,
        dtype: 'q8',
        weightCacheDir: cacheDir,
      });
      try {
        expect(q8.model.backend === 'webgpu' && q8.model.weights.storedCopies).toEqual({ 'model.safetensors': expected });
        // The f32 load kept this BF16 checkpoint's matrices as bf16 (2 bytes a weight); q8 takes 1.125.
        expect(q8.stats().weightBytes / f32Bytes).toBeLessThan(0.6);
        const b = await q8.chat.completions.create(ask);
        // The encoder ran in q8 too: its cache key names the dtype, so the same image has another key.
        expect(b.tessera.media[0].key).not.toBe(a.tessera.media[0].key);
        expect(b.tessera.tokenIds).toHaveLength(3);
      } finally {
        q8.destroy();
      }
      // Two copies: the text side (this engine) and the vision side (its encoder), written once, then read.
      const copies = readdirSync(cacheDir).filter((f) => f.endsWith('.tqw'));
      expect(copies).toHaveLength(2);
      stamps.push(
        copies
          .map((f) => `${f}@${statSync(join(cacheDir, f)).mtimeMs}`)
          .sort()
          .join(),
      );
    }
    expect(stamps[1]).toBe(stamps[0]);
  });
});

describe('stored quantized copies', () => {
  // The sharded F16 checkpoint: two files, so two copies, each keyed by its own file.
  let model: string;
  let store: DirWeightStore;
  let storeDir: string;
  let first: Map<string, string>;
  const files = ['model-00001-of-00002.safetensors', 'model-00002-of-00002.safetensors'];

  beforeAll(() => {
    model = join(scratch, 'tied');
    cpSync(`${tiny}/smolvlm-tiny-tied`, model, { recursive: true });
    storeDir = join(scratch, 'store');
    store = new DirWeightStore(storeDir);
  });

  it('are written after the first load and read by the next, byte for byte', async () => {
    const a = await load(model, { dtype: 'q8', weightStore: store });
    first = await snapshot(a);
    expect(a.weights.storedCopies).toEqual(Object.fromEntries(files.map((f) => [f, 'written'])));
    a.destroy();
    expect(readdirSync(storeDir).filter((f) => f.endsWith('.tqw'))).toHaveLength(2);
    const progress: string[] = [];
    const b = await load(model, { dtype: 'q8', weightStore: store, onProgress: (p) => progress.push(p.phase) });
    expect(b.weights.storedCopies).toEqual(Object.fromEntries(files.map((f) => [f, 'read'])));
    expect(await snapshot(b)).toEqual(first);
    b.destroy();
    expect(progress).toContain('cache');
    expect(progress).not.toContain('quantize');
  });

  it('another dtype is another copy', async () => {
    const m = await load(model, { dtype: 'q4', weightStore: store });
    expect(Object.values(m.weights.storedCopies)).toEqual(['written', 'written']);
    m.destroy();
    expect(readdirSync(storeDir).filter((f) => f.endsWith('.tqw'))).toHaveLength(4);
  });

  it('a damaged or truncated copy is detected, never used, and rebuilt', async () => {
    const copies = () =>
      readdirSync(storeDir)
        .filter((f) => f.endsWith('.tqw'))
        .map((f) => join(storeDir, f));
    const before = new Set(copies());
    const q8 = await load(model, { dtype: 'q8', weightStore: store });
    q8.destroy();
    for (const damage of ['flip', 'truncate'] as const) {
      // Damage every stored copy: both dtypes' files.
      for (const path of copies()) {
        const bytes = readFileSync(path);
        if (damage === 'flip') bytes[Math.floor(bytes.length / 2)] ^= 0x40;
        writeFileSync(path, damage === 'flip' ? bytes : bytes.subarray(0, bytes.length - 100));
      }
      const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
      const m = await load(model, { dtype: 'q8', weightStore: store });
      const warnings = warn.mock.calls.map((c) => String(c[0]));
      warn.mockRestore();
      expect(m.weights.storedCopies).toEqual(Object.fromEntries(files.map((f) => [f, 'rebuilt'])));
      expect(warnings).toHaveLength(2);
      expect(warnings[0]).toMatch(damage === 'flip' ? /checksum does not match its bytes \(damaged\)/ : /truncated/);
      expect(warnings[0]).toMatch(/is being rebuilt from the checkpoint file/);
      expect(await snapshot(m)).toEqual(first);
      m.destroy();
      const again = await load(model, { dtype: 'q8', weightStore: store });
      expect(Object.values(again.weights.storedCopies)).toEqual(['read', 'read']);
      again.destroy();
    }
    expect(before.size).toBe(4);
  });

  it('a copy of a changed checkpoint file is stale: rebuilt from the new file, never used', async () => {
    // Same header (names, shapes, dtypes, offsets) and size, different values: only the file's
    // modification time tells. Rewrite shard 2 with its bytes XOR-ed past the header.
    const path = join(model, files[1]);
    const bytes = readFileSync(path);
    const headerEnd = 8 + Number(bytes.readBigUInt64LE(0));
    for (let i = headerEnd; i < bytes.length; i += 2) bytes[i + 1] ^= 0x01; // flips an exponent bit of each f16
    writeFileSync(path, bytes);
    const later = new Date(statSync(path).mtimeMs + 5000);
    utimesSync(path, later, later);
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    const m = await load(model, { dtype: 'q8', weightStore: store });
    const warnings = warn.mock.calls.map((c) => String(c[0]));
    warn.mockRestore();
    // Shard 1 is unchanged and read; shard 2's copy was made from the old file: replaced.
    expect(m.weights.storedCopies).toEqual({ [files[0]]: 'read', [files[1]]: 'rebuilt' });
    expect(warnings).toEqual([expect.stringMatching(/made from a different version of the file/)]);
    const after = await snapshot(m);
    m.destroy();
    const fresh = await load(model, { dtype: 'q8' });
    expect(await snapshot(fresh)).toEqual(after);
    fresh.destroy();
    expect(after).not.toEqual(first);
    expect(readdirSync(storeDir).filter((f) => f.endsWith('.tqw'))).toHaveLength(4); // replaced, not added
  });
});
