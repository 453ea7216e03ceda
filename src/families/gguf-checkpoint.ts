// A GGUF checkpoint as a ModelSource: llama.cpp's model .gguf and, for the media tower, its mmproj .gguf,
// in any source (a folder, a URL base, browser files). Their headers are read once (the tensors are not);
// the family whose GgufFamily reads the pair writes the Hugging Face files their metadata stands for
// (config.json, preprocessor_config.json, tokenizer.json, ...), which readText serves, and maps each GGUF
// tensor to its HF name for the weight loader (model/weights/gguf/gguf-load.ts). The rest of the engine
// sees an HF checkpoint.

import { ModelFileError, UnsupportedModelError } from '../errors';
import type { ByteStream, DownloadProgress, ModelSource } from '../io/model-source';
import type { GgufHeader } from '../model/weights/gguf/gguf-format';
import type { GgufCheckpointFile, GgufCheckpointPlan, GgufModelSource, GgufTensorRef } from '../model/weights/gguf/gguf-plan';
import { openGguf } from '../model/weights/gguf/gguf-reader';
import { ggufTokenizerFiles } from '../processor/gguf-tokenizer';
import { FAMILIES } from './registry';

export interface GgufFiles {
  /** The model .gguf (the decoder and the tokenizer). */
  model: string;
  /** The mmproj .gguf (the vision or audio tower and its projector). */
  mmproj?: string;
}

/** Bytes of the first range request for a header; each next one is twice the last. */
const FIRST_HEADER_RANGE = 2 ** 20;

/**
 * A file's bytes from its start by range requests of growing size, for as long as they are pulled (a header
 * of a few MiB costs a few requests, not the file), or undefined when the source cannot read ranges.
 */
async function rangesFromStart(source: ModelSource, file: string): Promise<AsyncIterable<Uint8Array> | undefined> {
  const first = await source.readRange?.(file, 0, FIRST_HEADER_RANGE);
  if (!first) return undefined;
  return (async function* () {
    let got = first.bytes;
    let at = 0;
    let size = FIRST_HEADER_RANGE;
    for (;;) {
      yield got;
      at += got.byteLength;
      if (got.byteLength < size) return; // the file ended
      size *= 2;
      const next = await source.readRange!(file, at, at + size);
      if (!next) return; // at its end exactly
      got = next.bytes;
    }
  })();
}

async function readHeader(source: ModelSource, file: string, onDownload?: GgufDownloadProgress): Promise<GgufHeader> {
  // A source that reads ranges (a URL) reads the header alone: whether a family reads the pair is known
  // before anything is downloaded.
  const ranges = await rangesFromStart(source, file);
  if (ranges) {
    const gguf = await openGguf(ranges, file);
    await gguf.close();
    return gguf.header;
  }
  // Otherwise a URL source downloads the whole file into the browser's storage first (reported here); the
  // load then reads it from there.
  const opened = await source.openBytes(file, onDownload && ((loaded, total) => onDownload(file, loaded, total)));
  if (!opened) throw new ModelFileError(`${file} is not in ${source.where}`);
  const gguf = await openGguf(opened.stream, file, undefined, opened.sizeBytes);
  await gguf.close();
  return gguf.header;
}

const describe = (h: GgufHeader | undefined) =>
  h
    ? `architecture '${String(h.metadata.get('general.architecture'))}'${h.metadata.has('clip.projector_type') ? `, projector '${String(h.metadata.get('clip.projector_type'))}'` : ''}`
    : 'none';

class GgufCheckpointSource implements GgufModelSource {
  readonly where: string;

  constructor(
    readonly container: ModelSource,
    private readonly files: GgufFiles,
    private readonly texts: Record<string, string>,
    readonly gguf: GgufCheckpointPlan,
  ) {
    this.where = `${container.where} (${files.model}${files.mmproj ? ` + ${files.mmproj}` : ''})`;
  }

  get ggufFiles(): GgufFiles {
    return this.files;
  }

  /** The same checkpoint read from another container (a URL source that stores nothing). */
  in(container: ModelSource): GgufCheckpointSource {
    return new GgufCheckpointSource(container, this.files, this.texts, this.gguf);
  }

  async readText(name: string): Promise<string | undefined> {
    return this.texts[name];
  }

  async exists(name: string): Promise<boolean> {
    return Object.hasOwn(this.texts, name) || name === this.files.model || name === this.files.mmproj;
  }

  async openBytes(name: string, onDownload?: DownloadProgress): Promise<ByteStream | undefined> {
    if (name !== this.files.model && name !== this.files.mmproj) return undefined;
    return this.container.openBytes(name, onDownload);
  }
}

/** Bytes of a GGUF file downloaded so far (a URL source), for the load's progress. */
export type GgufDownloadProgress = (file: string, loadedBytes: number, totalBytes: number | undefined) => void;

/** The GGUF pair in `source` as a checkpoint; a named error when no family reads it. */
export async function openGgufCheckpoint(
  source: ModelSource,
  files: GgufFiles,
  onDownload?: GgufDownloadProgress,
): Promise<GgufModelSource> {
  const model = await readHeader(source, files.model, onDownload);
  const mmproj = files.mmproj ? await readHeader(source, files.mmproj, onDownload) : undefined;
  if (model.metadata.get('general.architecture') === 'clip') {
    throw new UnsupportedModelError(
      `${files.model} in ${source.where} is an mmproj file (a media tower); give the model .gguf as the model and this one as its mmproj`,
    );
  }
  const family = FAMILIES.find((f) => f.gguf?.reads(model, mmproj));
  if (!family?.gguf) {
    const readers = FAMILIES.filter((f) => f.gguf).map((f) => f.id);
    throw new UnsupportedModelError(
      `no model family reads the GGUF pair in ${source.where} (model: ${describe(model)}; mmproj: ${describe(mmproj)}); ` +
        `Tessera reads GGUF checkpoints of ${readers.join(', ')}${mmproj ? '' : ', each with its mmproj .gguf (give it with the mmproj option)'}`,
    );
  }
  const gguf = family.gguf;
  const where = source.where;
  const objects = { ...ggufTokenizerFiles(model.metadata, `${files.model} in ${where}`), ...gguf.files(model, mmproj, where) };
  const texts = Object.fromEntries(Object.entries(objects).map(([name, value]) => [name, JSON.stringify(value)]));
  const plan: GgufCheckpointPlan = { files: [] };
  const add = (file: string, header: GgufHeader, which: 'model' | 'mmproj') => {
    const tensors = new Map<string, GgufTensorRef>();
    for (const name of header.tensors.keys()) {
      const ref = gguf.tensor(which, name, { model, mmproj });
      if (ref) tensors.set(name, ref);
    }
    plan.files.push({ file, header, tensors } satisfies GgufCheckpointFile);
  };
  add(files.model, model, 'model');
  if (files.mmproj && mmproj) add(files.mmproj, mmproj, 'mmproj');
  return new GgufCheckpointSource(source, files, texts, plan);
}
