// The stored quantized copy of one checkpoint file: the GPU-ready bytes of every tensor the loader took
// from that file, in the storage format it was packed to, so a second load uploads them without
// converting or quantizing anything. One copy per (checkpoint location, file, selection, formats), made from
// one identity of the file (see storedCopyKey).
//
// Layout (integers little-endian):
//
//   offset   size  field
//   0        8     magic "TSQW0001"
//   8        4     u32 H = header bytes
//   12       H     header JSON (StoredHeader), zero-padded to a multiple of 4
//   12+H'    P     payload: for each entry in order, its data bytes then its scale bytes
//   end-32   32    blake3 of every byte before it
//
// A copy is used only if its header equals the header the loader expects now (same key, source identity,
// and entries: tensor names, targets, formats, row ranges, byte counts) and its trailer matches the bytes
// read; anything else (a stale copy of a changed file, a damaged or truncated one) is reported and
// rebuilt from the checkpoint, never used. Entries are handed to the caller as they arrive, so a copy that
// turns out to be damaged at the end has already been uploaded: the caller then rebuilds every entry.

import { createBLAKE3, type IHasher } from 'hash-wasm';
import type { WeightFormat } from '../../kernels/weight-format';

const MAGIC = 'TSQW0001';
export const STORED_COPY_VERSION = 2;

export interface StoredEntry {
  /** Checkpoint tensor name. */
  name: string;
  /** GPU weight it fills, in which format, and which of its rows. */
  target: string;
  format: WeightFormat;
  rowOffset: number;
  rows: number;
  K: number;
  dataBytes: number;
  scaleBytes: number;
}

export interface StoredHeader {
  version: number;
  key: string;
  file: string;
  /** What identified the source file when the copy was made (size, header digest, version tag). */
  sourceIdentity: string;
  entries: StoredEntry[];
  /**
   * The checksum of each source tensor's bytes when the copy was made (written with the copy; not part of
   * what a load expects): a load reading the copy gives them to the encoder's weights digest.
   */
  tensorSums?: TensorSum[];
}

export interface TensorSum {
  name: string;
  dtype: string;
  shape: number[];
  sum: string;
}

const encoder = new TextEncoder();

export async function blake3Hex(...parts: (string | Uint8Array)[]): Promise<string> {
  const h = (await createBLAKE3()).init();
  for (const p of parts) h.update(p);
  return h.digest('hex');
}

/**
 * The store key of a file's copy: where the checkpoint is, the file, and what is packed from it (formats
 * are part of the entries, so another dtype or another selection of tensors is another copy). The file's
 * identity is NOT in the key but in the header: a changed file finds its old copy, sees the identity
 * differ, and replaces it, so stale copies do not pile up.
 */
export async function storedCopyKey(where: string, file: string, entries: readonly StoredEntry[]): Promise<string> {
  const json = JSON.stringify({ v: STORED_COPY_VERSION, where, file, entries });
  return blake3Hex('tessera.stored-weights.v1\0', json);
}

function headerBytes(header: StoredHeader): Uint8Array {
  const json = encoder.encode(JSON.stringify(header));
  const padded = new Uint8Array(Math.ceil(json.byteLength / 4) * 4).fill(0x20);
  padded.set(json);
  return padded;
}

/**
 * The copy's bytes, as a stream: header first, then each entry's bytes from `entryBytes(entry)` (read
 * from the GPU by the caller), then the checksum.
 */
export async function* writeStoredCopy(
  header: StoredHeader,
  entryBytes: (entry: StoredEntry) => Promise<{ data: Uint8Array; scales?: Uint8Array }>,
): AsyncGenerator<Uint8Array> {
  const hasher = (await createBLAKE3()).init();
  const emit = (bytes: Uint8Array) => {
    hasher.update(bytes);
    return bytes;
  };
  const h = headerBytes(header);
  const prefix = new Uint8Array(12);
  prefix.set(encoder.encode(MAGIC));
  new DataView(prefix.buffer).setUint32(8, h.byteLength, true);
  yield emit(prefix);
  yield emit(h);
  for (const e of header.entries) {
    const { data, scales } = await entryBytes(e);
    if (data.byteLength !== e.dataBytes || (scales?.byteLength ?? 0) !== e.scaleBytes) {
      throw new RangeError(
        `stored copy: entry ${e.name} has ${data.byteLength}+${scales?.byteLength ?? 0} bytes, expected ${e.dataBytes}+${e.scaleBytes}`,
      );
    }
    yield emit(data);
    if (scales && scales.byteLength > 0) yield emit(scales);
  }
  yield hasher.digest('binary');
}

/** Pulls exact byte counts out of a chunk stream. */
class ByteQueue {
  private readonly chunks: Uint8Array[] = [];
  private buffered = 0;
  private done = false;
  private readonly it: AsyncIterator<Uint8Array>;

  constructor(source: AsyncIterable<Uint8Array>) {
    this.it = source[Symbol.asyncIterator]();
  }

  /** Exactly n bytes, or undefined if the stream ends first. */
  async take(n: number): Promise<Uint8Array | undefined> {
    while (this.buffered < n && !this.done) {
      const r = await this.it.next();
      if (r.done) this.done = true;
      else {
        this.chunks.push(r.value);
        this.buffered += r.value.byteLength;
      }
    }
    if (this.buffered < n) return undefined;
    const out = new Uint8Array(n);
    let o = 0;
    while (o < n) {
      const c = this.chunks[0];
      const k = Math.min(c.byteLength, n - o);
      out.set(c.subarray(0, k), o);
      o += k;
      if (k === c.byteLength) this.chunks.shift();
      else this.chunks[0] = c.subarray(k);
    }
    this.buffered -= n;
    return out;
  }

  /** True when nothing is left. */
  async atEnd(): Promise<boolean> {
    if (this.buffered > 0) return false;
    if (this.done) return true;
    const r = await this.it.next();
    if (r.done) {
      this.done = true;
      return true;
    }
    this.chunks.push(r.value);
    this.buffered += r.value.byteLength;
    return r.value.byteLength === 0 ? this.atEnd() : false;
  }

  async close(): Promise<void> {
    await this.it.return?.();
  }
}

export type StoredCopyResult = { ok: true; tensorSums: TensorSum[] } | { ok: false; reason: string };

/**
 * Read a stored copy, checking its header against `expected` before handing any entry to `onEntry`,
 * and its checksum at the end. Never throws for bad bytes: returns why the copy cannot be used.
 */
export function readStoredCopy(
  source: AsyncIterable<Uint8Array>,
  expected: StoredHeader,
  onEntry: (entry: StoredEntry, data: Uint8Array, scales: Uint8Array) => void,
  onBytes?: (bytesRead: number) => void,
  /** The copy must carry tensor checksums (a weights digest is being collected). */
  needSums = false,
): Promise<StoredCopyResult> {
  return readCopyChecked(
    source,
    (header) => {
      if (header.key !== expected.key || header.sourceIdentity !== expected.sourceIdentity) {
        return 'it was made from a different version of the file';
      }
      const { tensorSums: _sums, ...rest } = header;
      const { tensorSums: _expectedSums, ...wanted } = expected;
      if (JSON.stringify(rest) !== JSON.stringify(wanted)) return 'its tensors or formats differ from what this load needs';
      return undefined;
    },
    onEntry,
    onBytes,
    needSums,
  );
}

/**
 * Read a copy whose header `accept` checks (undefined: accepted; a string: why not) before any entry is
 * handed to `onEntry`, and its checksum at the end: a packed checkpoint (weights/packed-checkpoint.ts),
 * whose header is checked against the model's layout rather than against a header made from the source.
 */
export async function readCopyChecked(
  source: AsyncIterable<Uint8Array>,
  accept: (header: StoredHeader) => string | undefined,
  onEntry: (entry: StoredEntry, data: Uint8Array, scales: Uint8Array) => void,
  onBytes?: (bytesRead: number) => void,
  needSums = false,
): Promise<StoredCopyResult> {
  const q = new ByteQueue(source);
  const hasher: IHasher = (await createBLAKE3()).init();
  let read = 0;
  const take = async (n: number) => {
    const b = await q.take(n);
    if (b) {
      hasher.update(b);
      read += n;
      onBytes?.(read);
    }
    return b;
  };
  try {
    const prefix = await take(12);
    if (!prefix || new TextDecoder().decode(prefix.subarray(0, 8)) !== MAGIC) return { ok: false, reason: 'not a stored-weights file' };
    const hBytes = await take(new DataView(prefix.buffer, prefix.byteOffset).getUint32(8, true));
    if (!hBytes) return { ok: false, reason: 'truncated inside the header' };
    let header: StoredHeader;
    try {
      header = JSON.parse(new TextDecoder().decode(hBytes)) as StoredHeader;
    } catch {
      return { ok: false, reason: 'its header is not JSON' };
    }
    if (header?.version !== STORED_COPY_VERSION || !Array.isArray(header.entries))
      return { ok: false, reason: "its header is not this version's" };
    const refused = accept(header);
    if (refused !== undefined) return { ok: false, reason: refused };
    const tensorSums = header.tensorSums ?? [];
    if (needSums && tensorSums.length !== header.entries.length)
      return { ok: false, reason: 'it lacks the checksums of its source tensors' };
    for (const e of header.entries) {
      const data = await take(e.dataBytes);
      const scales = await take(e.scaleBytes);
      if (!data || !scales) return { ok: false, reason: `truncated in tensor ${e.name}` };
      onEntry(e, data, scales);
    }
    const digest = hasher.digest('binary');
    const trailer = await q.take(32);
    if (!trailer) return { ok: false, reason: 'truncated before its checksum' };
    if (!trailer.every((b, i) => b === digest[i])) return { ok: false, reason: 'its checksum does not match its bytes (damaged)' };
    if (!(await q.atEnd())) return { ok: false, reason: 'it has bytes after its checksum' };
    return { ok: true, tensorSums };
  } finally {
    await q.close();
  }
}
