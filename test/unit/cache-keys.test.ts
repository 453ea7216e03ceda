import { blake3 } from 'hash-wasm';
import { describe, expect, it } from 'vitest';
import { canonicalJson, checksum, contentKey, encoderIdentity } from '../../src/cache/content-key';
import { CacheKeyError } from '../../src/errors';

const bytes = (n: number, seed = 0) => Uint8Array.from({ length: n }, (_, i) => (i * 31 + seed) & 0xff);
const ID = 'a'.repeat(64);

describe('contentKey', () => {
  it('gives the same 64-hex key for the same bytes', async () => {
    const a = await contentKey(ID, bytes(1000));
    expect(a).toMatch(/^[0-9a-f]{64}$/);
    expect(await contentKey(ID, bytes(1000))).toBe(a);
  });

  it('changes when one byte changes', async () => {
    const changed = bytes(1000);
    changed[999] ^= 1;
    expect(await contentKey(ID, changed)).not.toBe(await contentKey(ID, bytes(1000)));
  });

  it('changes with the identity', async () => {
    expect(await contentKey('b'.repeat(64), bytes(1000))).not.toBe(await contentKey(ID, bytes(1000)));
  });

  it('hashes tag ‖ 0 ‖ identity ‖ 0 ‖ u64le(length) ‖ bytes, across the 4 MiB chunk boundary', async () => {
    const media = bytes((1 << 22) + 3, 7);
    const prefix = new TextEncoder().encode(`tessera.content-key.v1\0${ID}\0`);
    const len = new Uint8Array(8);
    new DataView(len.buffer).setUint32(0, media.byteLength, true);
    const stream = new Uint8Array(prefix.length + 8 + media.length);
    stream.set(prefix, 0);
    stream.set(len, prefix.length);
    stream.set(media, prefix.length + 8);
    expect(await contentKey(ID, media)).toBe(await blake3(stream));
  });

  it('hashes only the viewed bytes of a subarray', async () => {
    const big = bytes(100);
    expect(await contentKey(ID, big.subarray(10, 20))).toBe(await contentKey(ID, big.slice(10, 20)));
  });

  it('rejects an identity that would break the framing', async () => {
    await expect(contentKey('ab\0cd', bytes(4))).rejects.toThrowError(/NUL character at index 2/);
    await expect(contentKey('', bytes(4))).rejects.toBeInstanceOf(CacheKeyError);
  });
});

describe('encoderIdentity', () => {
  const base = {
    modelId: 'HuggingFaceTB/SmolVLM-256M-Instruct',
    weights: 'a'.repeat(64),
    dtype: 'f32',
    encoderConfig: { image: { longestEdge: 512, mean: [0.5, 0.5, 0.5] }, vision: { hiddenSize: 768, patchSize: 16 } },
  };

  it('ignores the order of config keys at every depth', async () => {
    const reordered = {
      encoderConfig: { vision: { patchSize: 16, hiddenSize: 768 }, image: { mean: [0.5, 0.5, 0.5], longestEdge: 512 } },
      dtype: 'f32',
      weights: 'a'.repeat(64),
      modelId: 'HuggingFaceTB/SmolVLM-256M-Instruct',
    };
    expect(await encoderIdentity(reordered)).toBe(await encoderIdentity(base));
  });

  it('changes with the weights digest, the revision, the dtype and any config value', async () => {
    const id = await encoderIdentity(base);
    expect(await encoderIdentity({ ...base, weights: 'b'.repeat(64) })).not.toBe(id);
    expect(await encoderIdentity({ ...base, revision: 'main' })).not.toBe(id);
    expect(await encoderIdentity({ ...base, dtype: 'f16' })).not.toBe(id);
    const edge = { ...base, encoderConfig: { ...base.encoderConfig, image: { longestEdge: 384, mean: [0.5, 0.5, 0.5] } } };
    expect(await encoderIdentity(edge)).not.toBe(id);
  });
});

describe('canonicalJson', () => {
  it('sorts keys, prints -0 as 0, skips undefined properties, prints typed arrays as arrays', () => {
    expect(canonicalJson({ z: 'x', a: [1, -0, { c: 0, b: null, u: undefined }], t: new Float32Array([0.5, 2]) })).toBe(
      '{"a":[1,0,{"b":null,"c":0}],"t":[0.5,2],"z":"x"}',
    );
  });

  it('rejects values without one JSON form', () => {
    expect(() => canonicalJson({ a: { b: Number.NaN } })).toThrowError(/\$\.a\.b is NaN/);
    expect(() => canonicalJson({ m: new Map() })).toThrowError(/\$\.m is a Map/);
    expect(() => canonicalJson([1, undefined])).toThrowError(/\$\[1\] is undefined/);
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => canonicalJson(cyclic)).toThrowError(CacheKeyError);
  });
});

describe('checksum', () => {
  it('is blake3 of the raw bytes (empty input: the published test vector)', async () => {
    expect(await checksum(new Uint8Array(0))).toBe('af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262');
    const f = new Float32Array([1, 2, 3, 4]);
    expect(await checksum(f.subarray(1, 3))).toBe(await checksum(new Uint8Array(f.buffer, 4, 8)));
  });
});
