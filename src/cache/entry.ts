// What the persistent encoder cache writes, and how it checks what it reads back (docs/design.md invariant 4:
// "entries verified on read"). A store may hand back anything: a half-written value, an entry from another
// model, a future format, a file with a flipped bit. Nothing read is trusted until verifyEntry() says so.
//
//   entry    (one per key)  { meta: EntryMeta, data: Float32Array }      // data: [shape...] f32, row-major
//   manifest (one per store, key MANIFEST_KEY)  { kind, version, entries: EntryMeta[] }  least recent first
//
//   verdict   when
//   corrupt   meta missing or malformed, meta.key ≠ key, dtype ≠ 'f32', length ≠ ∏shape,
//             data not a Float32Array of `length` floats, sizeBytes ≠ data bytes, checksum differs
//   foreign   well-formed, but written under another encoder identity (model, revision, dtype, config)
//   ok        everything matches; only then is data returned

import { checksum } from './content-key';

export interface EntryMeta {
  key: string;
  identity: string;
  /** Shape of data, e.g. [numTokens, hiddenDim]. */
  shape: number[];
  dtype: 'f32';
  /** Elements in data: the product of shape. */
  length: number;
  /** blake3 of data's bytes (content-key.ts checksum()). */
  checksum: string;
  sizeBytes: number;
  createdAt: number;
  /** Time of the last use. In the entry itself: when it was written; the manifest holds the live value. */
  lastUsedAt: number;
}

export interface StoredEntry {
  meta: EntryMeta;
  data: Float32Array;
}

/** Reserved store key of the manifest; cannot collide with a content key (64 lowercase hex). */
export const MANIFEST_KEY = 'tessera-manifest';
const MANIFEST_KIND = 'tessera-encoder-cache-manifest';
const MANIFEST_VERSION = 1;

export interface Manifest {
  kind: typeof MANIFEST_KIND;
  version: typeof MANIFEST_VERSION;
  entries: EntryMeta[];
}

export type Verdict = { kind: 'ok'; entry: StoredEntry } | { kind: 'corrupt'; reason: string } | { kind: 'foreign'; identity: string };

export function isEntryMeta(m: unknown): m is EntryMeta {
  if (m === null || typeof m !== 'object') return false;
  const r = m as Record<string, unknown>;
  return (
    typeof r.key === 'string' &&
    typeof r.identity === 'string' &&
    Array.isArray(r.shape) &&
    r.shape.every(isCount) &&
    r.dtype === 'f32' &&
    isCount(r.length) &&
    typeof r.checksum === 'string' &&
    isCount(r.sizeBytes) &&
    Number.isFinite(r.createdAt) &&
    Number.isFinite(r.lastUsedAt)
  );
}

/** Full check of a value read under key (see the table above). Hashes the data: O(bytes). */
export async function verifyEntry(key: string, value: unknown, identity: string): Promise<Verdict> {
  const v = value as { meta?: unknown; data?: unknown } | null;
  if (v === null || typeof v !== 'object' || !isEntryMeta(v.meta)) return { kind: 'corrupt', reason: 'meta missing or malformed' };
  const meta = v.meta;
  if (meta.key !== key) return { kind: 'corrupt', reason: `stored under ${key} but meta names ${meta.key}` };
  if (meta.identity !== identity) return { kind: 'foreign', identity: meta.identity };
  const product = meta.shape.reduce((a, b) => a * b, 1);
  if (product !== meta.length)
    return { kind: 'corrupt', reason: `length ${meta.length} but shape [${meta.shape.join(', ')}] holds ${product}` };
  if (!(v.data instanceof Float32Array)) return { kind: 'corrupt', reason: 'data is not a Float32Array' };
  if (v.data.length !== meta.length) return { kind: 'corrupt', reason: `data has ${v.data.length} floats but meta says ${meta.length}` };
  if (v.data.byteLength !== meta.sizeBytes)
    return { kind: 'corrupt', reason: `data has ${v.data.byteLength} bytes but meta says ${meta.sizeBytes}` };
  if ((await checksum(v.data)) !== meta.checksum) return { kind: 'corrupt', reason: 'checksum differs' };
  return { kind: 'ok', entry: { meta, data: v.data } };
}

export function makeManifest(entries: EntryMeta[]): Manifest {
  return { kind: MANIFEST_KIND, version: MANIFEST_VERSION, entries };
}

/** The well-formed metas of a stored manifest, in its order; [] for anything that is not a manifest. */
export function readManifest(value: unknown): EntryMeta[] {
  const m = value as Partial<Manifest> | null | undefined;
  if (!m || m.kind !== MANIFEST_KIND || m.version !== MANIFEST_VERSION || !Array.isArray(m.entries)) return [];
  return m.entries.filter(isEntryMeta);
}

function isCount(n: unknown): n is number {
  return Number.isSafeInteger(n) && (n as number) >= 0;
}
