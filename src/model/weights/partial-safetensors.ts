// Part of a safetensors file, read by range requests: its header first, then only the byte spans of the
// tensors asked for, presented as a smaller safetensors file of just those tensors (offsets rebased, the
// metadata kept), so the streaming reader (safetensors.ts) and everything after it work unchanged. A remote
// engine's local encoder needs the vision tower and connector of a checkpoint stored in one file; with this
// it does not download the language model. Spans closer than MERGE_GAP are read together, and no read is
// larger than MAX_READ unless one tensor is.

import { ModelFileError } from '../../errors';
import type { ByteStream, DownloadProgress, ModelSource } from '../../io/model-source';
import { parseSafetensorsHeader, readHeaderSize, type TensorInfo } from './safetensors';

const MERGE_GAP = 1 << 20;
const MAX_READ = 16 * 2 ** 20;
/** Above this share of the file's data, read the whole file instead. */
const MOST_OF_THE_FILE = 0.8;

interface Read {
  start: number;
  end: number;
  tensors: TensorInfo[];
}

/** The reads that cover `tensors` (sorted by offset), merging near neighbours up to MAX_READ. */
function planReads(tensors: readonly TensorInfo[]): Read[] {
  const reads: Read[] = [];
  for (const t of tensors) {
    const last = reads.at(-1);
    if (last && t.begin - last.end <= MERGE_GAP && t.end - last.start <= MAX_READ) {
      last.end = t.end;
      last.tensors.push(t);
    } else {
      reads.push({ start: t.begin, end: t.end, tensors: [t] });
    }
  }
  return reads;
}

/**
 * A stream of a safetensors file holding only `names` of `file` (the names it has; a missing one is the
 * caller's to report), read by ranges; undefined when the source cannot read ranges, or the tensors are
 * most of the file (then reading it whole costs no more).
 */
export async function openPartialSafetensors(
  source: ModelSource,
  file: string,
  names: readonly string[],
  onDownload?: DownloadProgress,
): Promise<ByteStream | undefined> {
  if (!source.readRange) return undefined;
  const first = await source.readRange(file, 0, 8);
  if (!first) return undefined;
  const headerSize = readHeaderSize(first.bytes, file);
  const json = await source.readRange(file, 8, 8 + headerSize);
  if (!json) return undefined;
  const header = parseSafetensorsHeader(json.bytes, headerSize, file);
  const wanted = [...new Set(names)].flatMap((n) => header.tensors.get(n) ?? []).sort((a, b) => a.begin - b.begin);
  const wantedBytes = wanted.reduce((a, t) => a + t.end - t.begin, 0);
  if (wantedBytes > MOST_OF_THE_FILE * (header.fileBytes - header.dataOffset)) return undefined;

  const entries: Record<string, unknown> = Object.keys(header.metadata).length > 0 ? { __metadata__: header.metadata } : {};
  let offset = 0;
  for (const t of wanted) {
    entries[t.name] = { dtype: t.dtype, shape: t.shape, data_offsets: [offset, offset + t.end - t.begin] };
    offset += t.end - t.begin;
  }
  let text = JSON.stringify(entries);
  text += ' '.repeat((8 - (text.length % 8)) % 8); // the format pads its header to 8 bytes
  const headerBytes = new TextEncoder().encode(text);
  const prefix = new Uint8Array(8 + headerBytes.byteLength);
  new DataView(prefix.buffer).setBigUint64(0, BigInt(headerBytes.byteLength), true);
  prefix.set(headerBytes, 8);

  const reads = planReads(wanted);
  const total = reads.reduce((a, r) => a + r.end - r.start, 0);
  async function* stream(): AsyncGenerator<Uint8Array> {
    yield prefix;
    let loaded = 0;
    for (const r of reads) {
      const got = await source.readRange!(file, header.dataOffset + r.start, header.dataOffset + r.end);
      if (!got) throw new ModelFileError(`${source.where} stopped answering range requests for ${file} half-way; load it again`);
      loaded += got.bytes.byteLength;
      onDownload?.(loaded, total);
      for (const t of r.tensors) yield got.bytes.subarray(t.begin - r.start, t.end - r.start);
    }
  }
  // The version says which file these tensors came from: a stored quantized copy made from them is
  // keyed by it (with the header of what was read).
  return {
    stream: stream(),
    sizeBytes: prefix.byteLength + offset,
    fromCache: false,
    version: first.version && `partial:${first.version}`,
  };
}
