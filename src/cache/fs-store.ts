// A Node filesystem KeyValueStore for the persistent encoder cache: one file per key under a directory.
// Node only (node:fs); browser code never imports it, and src/cache/index.ts does not export it.
//
// Writes are atomic: the bytes go to a temp file in the same directory, then rename() replaces the target,
// so a reader (another process, a crash mid-write) sees the old file or the new one, never half of one.
// No fsync: after a power loss a file may be missing or stale, which the cache's checksum-on-read handles.
//
// File layout (all integers little-endian):
//
//   offset  size  field
//   0       4     magic "TSKV"
//   4       4     u32 format version (1)
//   8       4     u32 headerBytes: UTF-8 JSON of the value without its `data` field
//   12      4     u32 dataKind: 0 = no data, 1 = Float32Array
//   16      8     u64 dataBytes
//   24      H     header JSON, zero-padded to a multiple of 4 (H)
//   24+H    D     data: the Float32Array's raw bytes (platform order; little-endian wherever Tessera runs)
//
// So a 1.9 MB embedding is 1.9 MB on disk plus a few hundred bytes, not a JSON array of decimals. Values are
// plain JSON, optionally with one Float32Array in `data` (the cache's `{ meta, data }` entries and manifest).
// A file that does not parse comes back from get() as `{ unreadable: reason }` instead of throwing: the
// cache sees an entry without meta, counts it corrupt and deletes it.
//
// File names: keys made of [A-Za-z0-9_-] (content keys are hex) are used as is, others as "~" + UTF-8 hex,
// then ".tkv"; names starting with "." are temp files and never listed.

import { randomUUID } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { InternalError } from '../errors';
import type { KeyValueStore } from './store';

const MAGIC = 0x564b5354; // "TSKV" read as a little-endian u32
const VERSION = 1;
const PREFIX_BYTES = 24;
const SUFFIX = '.tkv';
const MAX_NAME_BYTES = 200;

export function fsStore(dir: string): KeyValueStore {
  const pathOf = (key: string) => join(dir, fileName(key));
  return {
    async get(key) {
      let file: Buffer;
      try {
        file = await readFile(pathOf(key));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
        throw error;
      }
      return decode(file);
    },
    async set(key, value) {
      const target = pathOf(key);
      // Every time: cheap, and survives the directory being removed. Private to the user (0700, files
      // 0600): entries are checksummed but not authenticated, so whoever can write here decides what the
      // model sees for an image (see the README, "Encoder cache"). An existing directory keeps its mode.
      await mkdir(dir, { recursive: true, mode: 0o700 });
      const temp = join(dir, `.tmp-${randomUUID()}`);
      try {
        await writeFile(temp, encode(value), { mode: 0o600 });
        await rename(temp, target);
      } catch (error) {
        await rm(temp, { force: true }).catch(() => undefined);
        throw error;
      }
    },
    async del(key) {
      await rm(pathOf(key), { force: true });
    },
    async keys() {
      return (await listDir(dir)).filter((n) => !n.startsWith('.') && n.endsWith(SUFFIX)).map(keyOf);
    },
    async clear() {
      const names = (await listDir(dir)).filter((n) => n.endsWith(SUFFIX) || n.startsWith('.tmp-'));
      await Promise.all(names.map((n) => rm(join(dir, n), { force: true })));
    },
  };
}

function encode(value: unknown): Buffer {
  let data: Float32Array | undefined;
  let headerValue = value;
  if (value !== null && typeof value === 'object' && 'data' in value) {
    const { data: d, ...rest } = value as { data: unknown };
    if (!(d instanceof Float32Array)) throw new InternalError(`fsStore: a value's 'data' must be a Float32Array, got ${describe(d)}`);
    data = d;
    headerValue = rest;
  }
  const json = Buffer.from(JSON.stringify(headerValue) ?? 'null', 'utf8');
  const paddedBytes = Math.ceil(json.byteLength / 4) * 4;
  const dataBytes = data?.byteLength ?? 0;
  const out = Buffer.alloc(PREFIX_BYTES + paddedBytes + dataBytes);
  out.writeUInt32LE(MAGIC, 0);
  out.writeUInt32LE(VERSION, 4);
  out.writeUInt32LE(json.byteLength, 8);
  out.writeUInt32LE(data ? 1 : 0, 12);
  out.writeBigUInt64LE(BigInt(dataBytes), 16);
  json.copy(out, PREFIX_BYTES);
  if (data) out.set(new Uint8Array(data.buffer, data.byteOffset, data.byteLength), PREFIX_BYTES + paddedBytes);
  return out;
}

function decode(file: Buffer): unknown {
  if (file.byteLength < PREFIX_BYTES) return { unreadable: `${file.byteLength} bytes, shorter than the ${PREFIX_BYTES}-byte prefix` };
  if (file.readUInt32LE(0) !== MAGIC) return { unreadable: 'bad magic' };
  const version = file.readUInt32LE(4);
  if (version !== VERSION) return { unreadable: `format version ${version}, expected ${VERSION}` };
  const headerBytes = file.readUInt32LE(8);
  const dataKind = file.readUInt32LE(12);
  const dataBytes = Number(file.readBigUInt64LE(16));
  const paddedBytes = Math.ceil(headerBytes / 4) * 4;
  const expectedBytes = PREFIX_BYTES + paddedBytes + dataBytes;
  if (file.byteLength !== expectedBytes) return { unreadable: `${file.byteLength} bytes but the prefix implies ${expectedBytes}` };
  if (dataKind > 1 || (dataKind === 0 && dataBytes !== 0) || dataBytes % 4 !== 0) {
    return { unreadable: `dataKind ${dataKind} with ${dataBytes} data bytes` };
  }
  let header: unknown;
  try {
    header = JSON.parse(file.toString('utf8', PREFIX_BYTES, PREFIX_BYTES + headerBytes));
  } catch {
    return { unreadable: 'header is not JSON' };
  }
  if (dataKind === 0) return header;
  if (header === null || typeof header !== 'object' || Array.isArray(header)) return { unreadable: 'data without an object header' };
  const start = file.byteOffset + PREFIX_BYTES + paddedBytes;
  // A copy: aligned for Float32Array whatever the Buffer's offset, and owned by the caller (transferable).
  const data = new Float32Array(file.buffer.slice(start, start + dataBytes));
  return { ...header, data };
}

function fileName(key: string): string {
  const name = /^[A-Za-z0-9_-]+$/.test(key) ? key : `~${Buffer.from(key, 'utf8').toString('hex')}`;
  if (name.length > MAX_NAME_BYTES)
    throw new InternalError(
      `fsStore: key of ${key.length} characters makes a ${name.length}-byte file name; the limit is ${MAX_NAME_BYTES}`,
    );
  return name + SUFFIX;
}

function keyOf(name: string): string {
  const stem = name.slice(0, -SUFFIX.length);
  return stem.startsWith('~') ? Buffer.from(stem.slice(1), 'hex').toString('utf8') : stem;
}

async function listDir(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
}

function describe(v: unknown): string {
  return v === null ? 'null' : typeof v === 'object' ? ((v as object).constructor?.name ?? 'object') : typeof v;
}
