// A checkpoint written as Hugging Face writes a large one: model-0000K-of-0000N.safetensors shards of at
// most `maxShardBytes` each and model.safetensors.index.json (metadata.total_size, weight_map). Tensors are
// made, encoded and written one at a time, so a checkpoint of several GB is never held whole; each shard's
// sha256 is taken on the way through. Used by the bench models at real widths (make-bench-voxtral.ts).

import { createHash } from 'node:crypto';
import { closeSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { encodeTensor, type TensorToWrite } from '../src/model/weights/safetensors-writer';
import type { TensorSpec } from './tiny-weights';
import { writeJson } from './tiny-weights';

export interface WrittenFile {
  bytes: number;
  sha256: string;
}

const ELEMENT_BYTES: Record<TensorToWrite['dtype'], number> = { F32: 4, F16: 2, BF16: 2 };

const numel = (shape: readonly number[]) => shape.reduce((a, b) => a * b, 1);

/** The header of a shard holding `tensors` in order, padded to 8 bytes as the reference writer does. */
function shardHeader(tensors: readonly TensorSpec[], dtype: TensorToWrite['dtype']): Uint8Array {
  const header: Record<string, unknown> = { __metadata__: { format: 'pt' } };
  let offset = 0;
  for (const t of tensors) {
    const bytes = numel(t.shape) * ELEMENT_BYTES[dtype];
    header[t.name] = { dtype, shape: t.shape, data_offsets: [offset, offset + bytes] };
    offset += bytes;
  }
  const json = JSON.stringify(header);
  const length = new TextEncoder().encode(json).byteLength;
  const padded = new TextEncoder().encode(json + ' '.repeat(Math.ceil(length / 8) * 8 - length));
  const out = new Uint8Array(8 + padded.byteLength);
  new DataView(out.buffer).setBigUint64(0, BigInt(padded.byteLength), true);
  out.set(padded, 8);
  return out;
}

/** Groups `tensors` in order into shards of at most maxShardBytes of data (a larger tensor gets one alone). */
function shardsOf(tensors: readonly TensorSpec[], dtype: TensorToWrite['dtype'], maxShardBytes: number): TensorSpec[][] {
  const shards: TensorSpec[][] = [];
  let bytes = 0;
  for (const t of tensors) {
    const size = numel(t.shape) * ELEMENT_BYTES[dtype];
    if (shards.length === 0 || (bytes + size > maxShardBytes && bytes > 0)) {
      shards.push([]);
      bytes = 0;
    }
    shards.at(-1)!.push(t);
    bytes += size;
  }
  return shards;
}

/**
 * Writes `tensors` in `dtype` into `dir` as shards plus the index (one shard: model.safetensors, no index);
 * returns every file written with its size and sha256. `onTensor` hears each tensor as it is written.
 */
export function writeSafetensorsShards(
  dir: string,
  tensors: readonly TensorSpec[],
  dtype: TensorToWrite['dtype'],
  maxShardBytes: number,
  onTensor?: (name: string, done: number, total: number) => void,
): Record<string, WrittenFile> {
  const shards = shardsOf(tensors, dtype, maxShardBytes);
  const pad = (k: number) => String(k).padStart(5, '0');
  const names =
    shards.length === 1 ? ['model.safetensors'] : shards.map((_, k) => `model-${pad(k + 1)}-of-${pad(shards.length)}.safetensors`);
  const written: Record<string, WrittenFile> = {};
  const weightMap: Record<string, string> = {};
  let totalSize = 0;
  let done = 0;
  for (const [k, shard] of shards.entries()) {
    const fd = openSync(join(dir, names[k]), 'w');
    const hash = createHash('sha256');
    let bytes = 0;
    const put = (b: Uint8Array) => {
      for (let o = 0; o < b.byteLength; ) o += writeSync(fd, b, o, b.byteLength - o);
      hash.update(b);
      bytes += b.byteLength;
    };
    try {
      put(shardHeader(shard, dtype));
      for (const t of shard) {
        const encoded = encodeTensor({ name: t.name, shape: t.shape, dtype, data: t.values() });
        put(encoded);
        totalSize += encoded.byteLength;
        weightMap[t.name] = names[k];
        onTensor?.(t.name, ++done, tensors.length);
      }
    } finally {
      closeSync(fd);
    }
    written[names[k]] = { bytes, sha256: hash.digest('hex') };
  }
  if (shards.length > 1) {
    const index = join(dir, 'model.safetensors.index.json');
    writeJson(index, { metadata: { total_size: totalSize }, weight_map: weightMap });
  }
  return written;
}
