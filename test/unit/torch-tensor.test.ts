// The torch wire format of image_embeds (src/protocol/torch-tensor.ts) against PyTorch itself: Tessera's
// bytes for each case must be exactly the ones torch.load(weights_only=True) accepted when the goldens were
// made (test/reference/torch_wire.py, sha256 in verified.json), and Tessera must read what torch.save
// wrote (a view with a storage offset, f16, bf16). Then what the reader refuses.

import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { strToU8, unzipSync, zipSync } from 'fflate';
import { describe, expect, it } from 'vitest';
import { floatToHalf, halfToFloat } from '../../src/kernels/f16';
import { decodeTorchTensor, encodeTorchTensor, TorchFormatError, type TorchDtype } from '../../src/protocol/torch-tensor';
import { caseValues, TORCH_WIRE_CASES } from '../reference/torch-wire-cases';

const DIR = join(import.meta.dirname, '../fixtures/torch-wire');
const verified = JSON.parse(readFileSync(join(DIR, 'verified.json'), 'utf8')) as { files: Record<string, { sha256: string }> };
const expected = JSON.parse(readFileSync(join(DIR, 'expected.json'), 'utf8')) as {
  tensors: Record<string, { shape: number[]; dtype: TorchDtype; start?: number; values?: number[] }>;
};

function rounded(v: number, dtype: TorchDtype): number {
  if (dtype === 'float16') return halfToFloat(floatToHalf(v));
  if (dtype === 'bfloat16') {
    const u = new Uint32Array(Float32Array.of(v).buffer)[0];
    const r = ((u + 0x7fff + ((u >>> 16) & 1)) >>> 16) << 16;
    return new Float32Array(Uint32Array.of(r).buffer)[0];
  }
  return Math.fround(v);
}

describe('torch.save bytes for image_embeds', () => {
  it.each(TORCH_WIRE_CASES)('writes $name ($dtype $shape) exactly as PyTorch accepted it', (c) => {
    const bytes = encodeTorchTensor(caseValues(c), c.shape, c.dtype);
    expect(createHash('sha256').update(bytes).digest('hex')).toBe(verified.files[`ts-${c.name}.pt`].sha256);
    const back = decodeTorchTensor(bytes);
    expect(back.shape).toEqual(c.shape);
    expect(Array.from(back.data)).toEqual(Array.from(caseValues(c), (v) => rounded(v, c.dtype)));
  });

  it.each(Object.entries(expected.tensors))('reads %s as torch.save wrote it', (name, want) => {
    const t = decodeTorchTensor(readFileSync(join(DIR, `${name}.pt`)));
    expect(t.shape).toEqual(want.shape);
    expect(t.dtype).toBe(want.dtype);
    const values = Array.from(t.data);
    if (want.values) expect(values).toEqual(want.values);
    else {
      const start = want.start!;
      expect(values).toEqual(values.map((_, k) => rounded(Math.sin((start + k) * 0.37) * 3 + (start + k) / 1000, want.dtype)));
    }
  });

  it('refuses what is not one plain tensor, naming why', () => {
    const refuse = (bytes: Uint8Array, pattern: RegExp) => {
      expect(() => decodeTorchTensor(bytes)).toThrow(TorchFormatError);
      expect(() => decodeTorchTensor(bytes)).toThrow(pattern);
    };
    refuse(strToU8('not a zip'), /not a ZIP archive/);
    refuse(zipSync({ 'a/other.txt': strToU8('x') }), /no <name>\/data\.pkl/);
    // a pickle that would run os.system under a plain pickle.load
    const evil = new Uint8Array([0x80, 0x02, ...strToU8('cos\nsystem\n'), 0x58, 2, 0, 0, 0, ...strToU8('ls'), 0x85, 0x52, 0x2e]);
    refuse(zipSync({ 'a/data.pkl': evil }), /names os\.system; only a plain tensor/);
    const good = readFileSync(join(DIR, 'torch-f32-2d.pt'));
    refuse(good.subarray(0, good.length - 200), /not a ZIP archive/);
    const bigEndian = zipSync({ 'a/data.pkl': strToU8('x'), 'a/byteorder': strToU8('big') });
    refuse(bigEndian, /big-endian/);
    expect(() => encodeTorchTensor(new Float32Array(5), [2, 3])).toThrow(/holds 6 values but 5/);
    expect(() => encodeTorchTensor(Float32Array.of(1, 2.5, 3), [1, 3], 'int64')).toThrow(/value 1 \(2\.5\) is not an integer/);
    // int64 values an f32 cannot hold exactly are refused, not rounded
    const big = encodeTorchTensor(Float32Array.of(1, 2, 3), [1, 3], 'int64');
    const files = unzipSync(big);
    const storage = Object.keys(files).find((n) => n.endsWith('data/0'))!;
    new DataView(files[storage].buffer, files[storage].byteOffset).setBigInt64(8, 2n ** 24n + 1n, true);
    refuse(zipSync(files, { level: 0 }), /int64 value 1 \(16777217\) is beyond ±2\^24/);
  });
});
