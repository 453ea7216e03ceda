// Content keys for the encoder cache (docs/design.md invariant 3): a key names everything an embedding depends on,
// so two different images (or one image under two configs) never share an entry, and the same image sent by
// two requests, workers or tabs always does. blake3 via hash-wasm, which runs the same WASM in browsers,
// workers and Node. Follows vLLM `MultiModalHasher`: hash the canonical bytes, never a name.
//
//   encoderIdentity = blake3( "tessera.encoder-identity.v2" 0x00 canonicalJson({ modelId, revision, weights,
//                                                                               dtype, encoderConfig }) )
//   contentKey      = blake3( "tessera.content-key.v1" 0x00 identity 0x00 u64le(byteLength) media bytes )
//   checksum        = blake3( raw bytes of the array )                    every result: 64 lowercase hex
//
// Only the media bytes go in: file names, URLs and ids inside the file (EXIF) are not identity (two copies of
// one photo under different names share an entry; two photos with a copied EXIF id do not).
//
// Why the length is in the key: it makes the byte stream a prefix-free framing of (identity, media), so
// distinct pairs can never produce the same stream. The identity is terminated by 0x00 (so it must not
// contain one), and the explicit length fixes where the media ends: nothing can slide from one field into the
// next, and more fields (modality, frame index) can later be appended after the bytes without creating
// collisions between "bytes ‖ new field" and "longer bytes". The version tags let the scheme change without
// old entries being read as new ones.
//
// Each call creates its own hasher: hash-wasm caches the compiled module, a hasher is cheap, and sharing one
// across awaits (or at module level) would let two concurrent hashes interleave.

import { createBLAKE3, type IHasher } from 'hash-wasm';
import { CacheKeyError } from '../errors';

// v2: the weights digest joined the identity (v1 keys named the model only by its id).
const IDENTITY_TAG = 'tessera.encoder-identity.v2';
const CONTENT_TAG = 'tessera.content-key.v1';
/** Bytes handed to the hasher per update: bounds the copy into WASM memory for very large media. */
const CHUNK_BYTES = 1 << 22;

export interface EncoderIdentityInput {
  /** Hugging Face repo id or another stable name of the checkpoint. */
  modelId: string;
  /** Commit sha or tag of the checkpoint; pass the resolved commit when known. Absent hashes as null. */
  revision?: string;
  /**
   * Digest of the weights the encoder runs (encoder/weights-digest.ts: every vision and connector tensor's
   * bytes). A model id is a name anyone can reuse; this is what makes two checkpoints differ.
   */
  weights: string;
  /** Dtype the encoder computes and returns embeddings in ('f32', 'f16'). */
  dtype: string;
  /** Processor config for resize/tiling/normalisation plus the vision tower and connector config. */
  encoderConfig: unknown;
}

/**
 * JSON with object keys sorted (by UTF-16 code units) at every depth, so equal configs give equal strings.
 * Numbers print as JavaScript's shortest round-trip form (-0 as 0); typed arrays print as arrays. Object
 * properties that are undefined are skipped (as JSON.stringify does). Anything that has no single canonical
 * form throws CacheKeyError: NaN/Infinity, bigint, functions, symbols, undefined in an array, class instances
 * (Map, Date, ...), and cycles.
 */
export function canonicalJson(value: unknown): string {
  return canonical(value, '$', new Set());
}

function canonical(value: unknown, path: string, seen: Set<object>): string {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'boolean':
      return value ? 'true' : 'false';
    case 'string':
      return JSON.stringify(value);
    case 'number':
      if (!Number.isFinite(value))
        throw new CacheKeyError(`canonicalJson: ${path} is ${value}, which has no JSON form; use a finite number or null.`);
      return JSON.stringify(value); // -0 prints as 0
    case 'object':
      break;
    default:
      throw new CacheKeyError(`canonicalJson: ${path} is a ${typeof value}, which has no JSON form; pass plain data.`);
  }
  const obj = value as object;
  if (seen.has(obj)) throw new CacheKeyError(`canonicalJson: ${path} refers back to an enclosing object (a cycle).`);
  if (ArrayBuffer.isView(obj) && !(obj instanceof DataView)) {
    return canonical(Array.from(obj as unknown as ArrayLike<number | bigint>), path, seen);
  }
  seen.add(obj);
  let out: string;
  if (Array.isArray(obj)) {
    out = `[${obj
      .map((item, i) => {
        if (item === undefined) throw new CacheKeyError(`canonicalJson: ${path}[${i}] is undefined (or a hole); use null.`);
        return canonical(item, `${path}[${i}]`, seen);
      })
      .join(',')}]`;
  } else {
    const proto = Object.getPrototypeOf(obj);
    if (proto !== Object.prototype && proto !== null) {
      const name = (obj.constructor as { name?: string } | undefined)?.name ?? 'unknown';
      throw new CacheKeyError(`canonicalJson: ${path} is a ${name}, not a plain object; convert it to plain data first.`);
    }
    const record = obj as Record<string, unknown>;
    const parts: string[] = [];
    for (const k of Object.keys(record).sort()) {
      if (record[k] === undefined) continue;
      parts.push(`${JSON.stringify(k)}:${canonical(record[k], `${path}.${k}`, seen)}`);
    }
    out = `{${parts.join(',')}}`;
  }
  seen.delete(obj);
  return out;
}

/** Digest naming everything an embedding depends on besides the media bytes (64 lowercase hex). */
export async function encoderIdentity(input: EncoderIdentityInput): Promise<string> {
  const json = canonicalJson({
    modelId: input.modelId,
    revision: input.revision ?? null,
    weights: input.weights,
    dtype: input.dtype,
    encoderConfig: input.encoderConfig,
  });
  const h = await newHasher();
  h.update(`${IDENTITY_TAG}\0${json}`); // hash-wasm hashes strings as UTF-8
  return h.digest('hex');
}

/** Cache key of one media item under an encoder identity (64 lowercase hex). See the header for framing. */
export async function contentKey(identity: string, media: Uint8Array): Promise<string> {
  const h = await contentHasher(identity, media.byteLength);
  updateChunked(h, media);
  return h.digest('hex');
}

/**
 * contentKey() of media read piece by piece (a Blob's stream, so a large video is never held whole): the
 * same key as contentKey(identity, the concatenated bytes). Throws CacheKeyError when the pieces do not add
 * up to byteLength.
 */
export async function contentKeyOfChunks(identity: string, byteLength: number, chunks: AsyncIterable<Uint8Array>): Promise<string> {
  const h = await contentHasher(identity, byteLength);
  let seen = 0;
  for await (const chunk of chunks) {
    updateChunked(h, chunk);
    seen += chunk.byteLength;
  }
  if (seen !== byteLength) throw new CacheKeyError(`contentKeyOfChunks: read ${seen} bytes but ${byteLength} were announced.`);
  return h.digest('hex');
}

/** A hasher fed with the key's framing up to the media bytes (see the header). */
async function contentHasher(identity: string, byteLength: number): Promise<IHasher> {
  if (identity.length === 0) throw new CacheKeyError('contentKey: the identity is empty; pass the result of encoderIdentity().');
  const nulAt = identity.indexOf('\0');
  if (nulAt >= 0)
    throw new CacheKeyError(`contentKey: the identity has a NUL character at index ${nulAt}; it would break the key framing.`);
  const h = await newHasher();
  h.update(`${CONTENT_TAG}\0${identity}\0`).update(u64le(byteLength));
  return h;
}

/** blake3 of an array's raw bytes (platform byte order: little-endian wherever Tessera runs). */
export async function checksum(data: Float32Array | Uint8Array): Promise<string> {
  const h = await newHasher();
  updateChunked(h, new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
  return h.digest('hex');
}

async function newHasher(): Promise<IHasher> {
  return (await createBLAKE3()).init();
}

function updateChunked(h: IHasher, bytes: Uint8Array): void {
  for (let at = 0; at < bytes.byteLength; at += CHUNK_BYTES) h.update(bytes.subarray(at, at + CHUNK_BYTES));
}

function u64le(n: number): Uint8Array {
  const out = new Uint8Array(8);
  const view = new DataView(out.buffer);
  view.setUint32(0, n >>> 0, true);
  view.setUint32(4, Math.floor(n / 2 ** 32), true);
  return out;
}
