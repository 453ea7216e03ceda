// Load a checkpoint's weights onto the GPU: find its safetensors file(s), check every tensor name and
// shape against the config BEFORE uploading anything from a file, then stream each tensor to its
// place in the (possibly fused) GPU weight as soon as its bytes arrive, packed to the requested dtype
// (weights/dtype.ts) on the GPU (weights/gpu-weights.ts).
//
//   single file:  model.safetensors                   header checked -> upload
//   sharded:      model.safetensors.index.json         every name checked against weight_map first,
//                 model-0000k-of-0000n.safetensors     then each shard's header -> its uploads
//
// Stored copies: when a file holds packed (f16/q8/q4) weights and a WeightStore is given, its GPU-ready
// bytes are stored after the first load, keyed by the file's identity (name, size, header, version tag)
// and the formats; the next load reads them instead (weights/stored-copy.ts). A copy that does not match
// is reported once and rebuilt from the file, never used.

import {
  CheckpointFormatError,
  InternalError,
  MissingTensorError,
  ModelFileError,
  StoredWeightsMismatchError,
  TensorShapeError,
} from '../errors';
import type { GpuContext } from '../gpu/context';
import type { Tensor } from '../gpu/tensor';
import { isPacked, type Weight, type WeightFormat } from '../kernels/weight-format';
import type { ModelConfig } from './config';
import { checkCheckpointFileName } from '../io/checkpoint-path';
import { openPartialSafetensors } from './weights/partial-safetensors';
import { ReadArena } from './weights/read-arena';
import { openSafetensors, type SafetensorsHeader } from './weights/safetensors';
import type { ModelSource } from '../io/model-source';
import { weightLayout, type CheckpointTensorSpec, type GpuWeightSpec, type WeightLayout } from './weight-layout';
import {
  computePrecisionFor,
  formatFor,
  partOf,
  resolveDtype,
  storageFormatFor,
  type ComputePrecision,
  type DtypeOption,
  type DtypePlan,
  type WeightPart,
} from './weights/dtype';
import { allocateLoadedWeight, entryFor, WeightWriter } from './weights/gpu-weights';
import { isRowSplit, type LoadedWeight, type RowPart, rowPartsOf } from './weights/row-split';
import {
  blake3Hex,
  readCopyChecked,
  readStoredCopy,
  STORED_COPY_VERSION,
  storedCopyKey,
  writeStoredCopy,
  type StoredEntry,
  type StoredHeader,
  type TensorSum,
} from './weights/stored-copy';
import type { WeightStore } from './weights/store';
import { matchPacked, PACK_MANIFEST, packedDtype, readPackManifest } from './weights/packed-checkpoint';
import { aliasAbsent, respell } from './weights/layout-names';
import { loadGgufTensors } from './weights/gguf/gguf-load';
import { type GgufModelSource, isGgufSource } from './weights/gguf/gguf-plan';

interface LoadProgress {
  /** download: bytes fetched; upload: checkpoint bytes read; quantize: bytes packed on the GPU; cache: stored-copy bytes read. */
  phase: 'download' | 'upload' | 'quantize' | 'cache';
  file: string;
  loadedBytes: number;
  totalBytes: number | undefined;
}

export type ProgressCallback = (p: LoadProgress) => void;

/** What happened to each checkpoint file's stored copy during a load. */
export type StoredCopyStatus = 'read' | 'written' | 'rebuilt' | 'not stored' | 'store failed' | 'packed';

export class ModelWeights {
  private destroyed = false;

  constructor(
    private readonly gpu: GpuContext,
    private readonly weights: Map<string, LoadedWeight>,
    private readonly buffers: GPUBuffer[],
    readonly layout: WeightLayout,
    readonly sizeBytes: number,
    readonly dtype: DtypePlan,
    readonly storedCopies: Record<string, StoredCopyStatus> = {},
  ) {}

  private lookup(key: string): LoadedWeight {
    const w = this.weights.get(key) ?? this.weights.get(this.layout.aliases[key] ?? '');
    if (!w) throw new InternalError(`no weight '${key}'`);
    return w;
  }

  /** A weight that is one binding (only the layout's rowSplit and formatParts weights may be split; they are read by rowParts). */
  private whole(key: string): Weight {
    const w = this.lookup(key);
    if (isRowSplit(w)) throw new InternalError(`weight '${key}' is split in ${w.parts.length} parts of rows; read it by rowParts()`);
    return w;
  }

  /** An f32 weight (norms, biases, and matrices kept in f32). */
  get(key: string): Tensor {
    const w = this.whole(key);
    if (isPacked(w)) throw new InternalError(`weight '${key}' is ${w.format}; read it through a kernel that takes packed weights`);
    return w;
  }

  /** A weight matrix in whatever format it was loaded in (for matmul, patch embedding and gathers). */
  matrix(key: string): Weight {
    return this.whole(key);
  }

  /**
   * A weight matrix [N, K] as parts of whole rows, each within one binding: one part unless the weight is
   * larger than the device binds (the layout's rowSplit weights), or its tensors are held in different
   * formats (its formatParts weights; weights/row-split.ts).
   */
  rowParts(key: string): readonly RowPart[] {
    const w = this.lookup(key);
    return rowPartsOf(w, w.shape);
  }

  destroy(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    for (const b of this.buffers) this.gpu.memory.destroyBuffer(b);
  }
}

const sameShape = (a: readonly number[], b: readonly number[]) => a.length === b.length && a.every((d, i) => d === b[i]);

/** Which file holds each expected tensor. */
async function planFiles(source: ModelSource, layout: WeightLayout): Promise<Map<string, CheckpointTensorSpec[]>> {
  const indexText = await source.readText('model.safetensors.index.json');
  const byFile = new Map<string, CheckpointTensorSpec[]>();
  if (indexText === undefined) {
    byFile.set('model.safetensors', layout.checkpoint);
    return byFile;
  }
  let weightMap: Record<string, string>;
  try {
    weightMap = JSON.parse(indexText).weight_map;
  } catch (e) {
    throw new CheckpointFormatError(`model.safetensors.index.json is not valid JSON: ${(e as Error).message}`);
  }
  if (!weightMap || typeof weightMap !== 'object') throw new CheckpointFormatError('model.safetensors.index.json has no weight_map');
  respell(layout, (name) => Object.hasOwn(weightMap, name));
  aliasAbsent(layout, (name) => Object.hasOwn(weightMap, name));
  for (const spec of layout.checkpoint) {
    const file = weightMap[spec.name];
    if (!file) throw new MissingTensorError(spec.name, spec.shape, 'model.safetensors.index.json');
    checkCheckpointFileName(file, source.where, `model.safetensors.index.json (for '${spec.name}')`);
    if (!byFile.has(file)) byFile.set(file, []);
    byFile.get(file)!.push(spec);
  }
  return byFile;
}

function checkHeader(file: string, header: SafetensorsHeader, specs: CheckpointTensorSpec[]): void {
  for (const spec of specs) {
    const info = header.tensors.get(spec.name);
    if (!info) throw new MissingTensorError(spec.name, spec.shape, file);
    if (!sameShape(info.shape, spec.shape)) throw new TensorShapeError(spec.name, spec.shape, info.shape, file);
    if (info.dtype !== 'F32' && info.dtype !== 'F16' && info.dtype !== 'BF16') {
      throw new CheckpointFormatError(`${file}: tensor '${spec.name}' is ${info.dtype}; Tessera loads F32, F16 and BF16 weights`);
    }
  }
}

/** Which GPU weights to load: all, or only one part (an encoder worker: vision or audio; the main thread: text). */
type WeightSelection = 'all' | WeightPart;

function selects(selection: WeightSelection, gpuKey: string): boolean {
  if (selection === 'all') return true;
  return partOf(gpuKey) === selection;
}

export interface LoadWeightsOptions {
  onProgress?: ProgressCallback;
  selection?: WeightSelection;
  /** Storage format of the weight matrices (default f32); see weights/dtype.ts. */
  dtype?: DtypeOption;
  /** Precision f16 weights are multiplied in (default f32; f16 needs shader-f16, else one warning). */
  compute?: ComputePrecision;
  /** Keep GPU-ready copies of files with packed weights here, and read them back on later loads. */
  store?: WeightStore;
  /**
   * Read only the selected tensors of each file, by range requests, when the source can (a URL checkpoint
   * whose server honours ranges): a remote engine's encoder then skips the language model's bytes. Off by
   * default: an engine reads whole files, which the browser cache keeps for the next load.
   */
  partialFiles?: boolean;
  /**
   * Sees each selected tensor's stored bytes as they load (the encoder's weights digest); a file read
   * from a stored copy gives the checksums its source bytes had when the copy was made.
   */
  tensorDigest?: TensorDigestSink;
}

/** Collects the identity of the tensors a load reads (src/encoder/weights-digest.ts). */
export interface TensorDigestSink {
  /** The checksum of a tensor's stored bytes, recorded. */
  addBytes(info: { name: string; dtype: string; shape: readonly number[] }, bytes: Uint8Array): Promise<string>;
  /** A checksum recorded earlier (from a stored copy's header). */
  addSum(info: { name: string; dtype: string; shape: readonly number[] }, sum: string): void;
}

export async function loadWeights(
  gpu: GpuContext,
  source: ModelSource,
  config: ModelConfig,
  options: LoadWeightsOptions = {},
): Promise<ModelWeights> {
  const selection = options.selection ?? 'all';
  // A packed checkpoint (tessera pack) holds its weights in one dtype, which is the load's.
  const pack = await readPackManifest(source);
  const plan = pack
    ? packedDtype(pack, options.dtype === undefined ? undefined : resolveDtype(options.dtype), source.where)
    : resolveDtype(options.dtype);
  const full = weightLayout(config);
  const layout: WeightLayout = {
    gpu: full.gpu.filter((w) => selects(selection, w.key)),
    checkpoint: full.checkpoint.filter((t) => selects(selection, t.target)),
    aliases: Object.fromEntries(Object.entries(full.aliases).filter(([k]) => selects(selection, k))),
    aliasIfMissing: Object.fromEntries(Object.entries(full.aliasIfMissing ?? {}).filter(([k]) => selects(selection, k))),
    spellings: full.spellings,
  };
  const f16Math =
    layout.gpu.some((w) => formatFor(plan, w) === 'f16') &&
    options.compute !== undefined &&
    computePrecisionFor(gpu, options.compute) === 'f16';
  if (isGgufSource(source)) return loadGguf(gpu, source, layout, plan, f16Math, options.onProgress);
  const byFile = await planFiles(source, layout);
  const weights = new Map<string, LoadedWeight>();
  const formats = new Map<string, WeightFormat>();
  const buffers: GPUBuffer[] = [];
  let sizeBytes = 0;
  const partsOf = new Map<string, CheckpointTensorSpec[]>();
  for (const t of layout.checkpoint) partsOf.set(t.target, [...(partsOf.get(t.target) ?? []), t]);
  // Each GPU weight is allocated with the first file that holds one of its tensors, once that file's
  // header has told their dtypes (an f32 matrix of BF16 tensors is stored as bf16: weights/dtype.ts).
  const allocateAs = (w: GpuWeightSpec, format: WeightFormat) => {
    const a = allocateLoadedWeight(gpu, { key: w.key, shape: w.shape, format, f16Math, rowSplit: w.rowSplit }, maxBinding);
    formats.set(w.key, format);
    weights.set(w.key, a.weight);
    buffers.push(...a.buffers);
    sizeBytes += a.sizeBytes;
  };
  const allocate = (header: SafetensorsHeader) => {
    for (const w of layout.gpu) {
      const parts = partsOf.get(w.key) ?? [];
      if (weights.has(w.key) || !parts.some((p) => header.tensors.has(p.name))) continue;
      allocateAs(
        w,
        storageFormatFor(
          plan,
          w,
          parts.map((p) => header.tensors.get(p.name)?.dtype),
        ),
      );
    }
  };
  const shapes = new Map(layout.gpu.map((w) => [w.key, w.shape]));
  const maxBinding = gpu.limits.maxStorageBufferBindingSize;
  const loaded = new ModelWeights(gpu, weights, buffers, layout, 0, plan);
  const status: Record<string, StoredCopyStatus> = {};
  const writer = new WeightWriter(gpu);
  // Each tensor is written to the GPU before the next is read: all are read into one buffer (read-arena.ts).
  const arena = new ReadArena();
  try {
    for (const [file, fileSpecs] of byFile) {
      let specs = fileSpecs;
      const onDownload = (loadedBytes: number, totalBytes: number | undefined) =>
        onProgressSafe(options.onProgress, { phase: 'download', file, loadedBytes, totalBytes });
      const packedName = pack?.files[file];
      if (packedName !== undefined) {
        const opened = await source.openBytes(packedName, onDownload);
        if (!opened) throw new ModelFileError(`${packedName}, which ${PACK_MANIFEST} names for ${file}, is not in ${source.where}`);
        const specByName = new Map<string, CheckpointTensorSpec>();
        const r = await readCopyChecked(
          opened.stream,
          (h) => {
            const present = new Set(h.entries.map((e) => e.name));
            respell(layout, (name) => present.has(name));
            const absent = aliasAbsent(layout, (name) => present.has(name));
            const used = specs.filter((t) => !absent.has(t.name));
            const matched = matchPacked(h, file, used, shapes);
            if (typeof matched === 'string') return matched;
            for (const t of used) specByName.set(t.name, t);
            for (const w of layout.gpu) if (!weights.has(w.key) && matched.has(w.key)) allocateAs(w, matched.get(w.key)!);
            return undefined;
          },
          // Entries of tensors this load did not select (an encoder's load skips the decoder's) pass by.
          (e, data, scales) => {
            if (specByName.has(e.name)) writer.writeBytes(weights.get(e.target)!, e, data, scales);
          },
          (loadedBytes) => onProgressSafe(options.onProgress, { phase: 'upload', file, loadedBytes, totalBytes: opened.sizeBytes }),
          options.tensorDigest !== undefined,
        );
        if (!r.ok) throw new CheckpointFormatError(`${packedName} (${file} packed) in ${source.where} cannot be loaded: ${r.reason}`);
        for (const t of r.tensorSums) if (specByName.has(t.name)) options.tensorDigest?.addSum(t, t.sum);
        status[file] = 'packed';
        continue;
      }
      const names = specs.map((s) => s.name);
      const opened =
        (options.partialFiles && selection !== 'all' ? await openPartialSafetensors(source, file, names, onDownload) : undefined) ??
        (await source.openBytes(file, onDownload));
      if (!opened) {
        throw new MissingTensorError(specs[0].name, specs[0].shape, `${source.where} (the file ${file} does not exist)`);
      }
      /** The tensors of this file the load writes, once its header is checked; the others are passed over. */
      let used: ReadonlySet<string> | undefined;
      const st = await openSafetensors(
        opened.stream,
        file,
        (loadedBytes) => onProgressSafe(options.onProgress, { phase: 'upload', file, loadedBytes, totalBytes: opened.sizeBytes }),
        opened.sizeBytes,
        arena.options((name) => used !== undefined && !used.has(name)),
      );
      try {
        // One file and no index: only its header tells whether an LM head tied in text_config is there.
        respell(layout, (name) => st.header.tensors.has(name));
        const absent = aliasAbsent(layout, (name) => st.header.tensors.has(name));
        if (absent.size > 0) specs = specs.filter((t) => !absent.has(t.name));
        checkHeader(file, st.header, specs);
        allocate(st.header);
        const entries = specs.map((s) =>
          entryFor(
            s.name,
            s.target,
            shapes.get(s.target)!,
            s.offsetElems,
            s.shape.reduce((a, b) => a * b, 1),
            formats.get(s.target)!,
          ),
        );
        // Stored copies are for formats packed at load (f16, q8, q4); f32 and bf16 hold the file's values.
        const packed = entries.some((e) => e.format !== 'f32' && e.format !== 'bf16');
        const store = packed ? options.store : undefined;
        let header: StoredHeader | undefined;
        if (store) {
          const sourceIdentity = await blake3Hex(`${file}\0${opened.sizeBytes ?? ''}\0${opened.version ?? ''}\0`, st.headerJson);
          header = { version: STORED_COPY_VERSION, key: await storedCopyKey(source.where, file, entries), file, sourceIdentity, entries };
          const read = await readCopy(
            store,
            header,
            (e, data, scales) => writer.writeBytes(weights.get(e.target)!, e, data, scales),
            options.onProgress,
            options.tensorDigest !== undefined,
          );
          if (typeof read === 'object') {
            for (const t of read.tensorSums) options.tensorDigest?.addSum(t, t.sum);
            status[file] = 'read';
            continue;
          }
          status[file] = read === 'absent' ? 'written' : 'rebuilt';
        } else {
          status[file] = 'not stored';
        }
        const byName = new Map(entries.map((e) => [e.name, e]));
        used = new Set(byName.keys());
        arena.reserve(Math.max(0, ...specs.map((t) => st.header.tensors.get(t.name)!).map((i) => i.end - i.begin)));
        const isPacking = (e: StoredEntry) => e.format !== 'f32' && e.format !== 'bf16';
        const packedTotal = entries.filter(isPacking).reduce((a, e) => a + e.rows * e.K * 4, 0);
        let packedDone = 0;
        const tensorSums: TensorSum[] = [];
        for await (const { info, bytes } of st.tensors) {
          const entry = byName.get(info.name);
          if (!entry) continue; // e.g. an lm_head.weight next to tied embeddings
          await writer.writeTensor(weights.get(entry.target)!, entry, info, bytes, file);
          const sum = await options.tensorDigest?.addBytes(info, bytes);
          if (sum !== undefined) tensorSums.push({ name: info.name, dtype: info.dtype, shape: info.shape, sum });
          if (isPacking(entry)) {
            packedDone += entry.rows * entry.K * 4;
            onProgressSafe(options.onProgress, { phase: 'quantize', file, loadedBytes: packedDone, totalBytes: packedTotal });
          }
        }
        if (store && header) {
          await gpu.sync();
          const h = header;
          await store
            .write(
              h.key,
              writeStoredCopy({ ...h, tensorSums }, (e) => writer.readEntry(weights.get(e.target)!, e)),
            )
            .catch((e: unknown) => {
              status[file] = 'store failed';
              console.warn(
                `tessera: could not store the quantized copy of ${file} in ${store.where} (${(e as Error).message}); the next load quantizes it again`,
              );
            });
        }
      } finally {
        await st.close();
      }
    }
  } catch (e) {
    loaded.destroy();
    throw e;
  } finally {
    writer.release();
    arena.release();
  }
  await gpu.sync();
  return new ModelWeights(gpu, weights, buffers, layout, sizeBytes, plan, status);
}

/** A GGUF checkpoint's weights (weights/gguf/gguf-load.ts): no stored copies, its blocks are loaded as they are. */
async function loadGguf(
  gpu: GpuContext,
  source: GgufModelSource,
  layout: WeightLayout,
  plan: DtypePlan,
  f16Math: boolean,
  onProgress: ProgressCallback | undefined,
): Promise<ModelWeights> {
  const g = await loadGgufTensors({
    gpu,
    source,
    plan: source.gguf,
    layout,
    dtype: plan,
    f16Math,
    onDownload: (file, loadedBytes, totalBytes) => onProgressSafe(onProgress, { phase: 'download', file, loadedBytes, totalBytes }),
    onUpload: (file, loadedBytes, totalBytes) => onProgressSafe(onProgress, { phase: 'upload', file, loadedBytes, totalBytes }),
  });
  await gpu.sync();
  if (g.widened.length > 0) {
    console.warn(
      `tessera: ${g.widened.length} weights of ${source.where} are held as f32 (${g.widened.slice(0, 3).join(', ')}${g.widened.length > 3 ? ', ...' : ''}): ` +
        'their GGUF block types (or a mix of types in one fused weight) have no exact packed format here; ' +
        'Q8_0, Q4_0 and Q4_1 files load packed',
    );
  }
  const status = Object.fromEntries(source.gguf.files.map((f) => [f.file, 'not stored' as const]));
  return new ModelWeights(gpu, g.weights, g.buffers, layout, g.sizeBytes, plan, status);
}

function onProgressSafe(cb: ProgressCallback | undefined, p: LoadProgress): void {
  cb?.(p);
}

/** Upload a file's stored copy if there is a usable one. */
async function readCopy(
  store: WeightStore,
  header: StoredHeader,
  onEntry: (e: StoredEntry, data: Uint8Array, scales: Uint8Array) => void,
  onProgress: ProgressCallback | undefined,
  needSums: boolean,
): Promise<{ tensorSums: TensorSum[] } | 'absent' | 'mismatch'> {
  let chunks: AsyncIterable<Uint8Array> | undefined;
  try {
    chunks = await store.read(header.key);
  } catch (e) {
    console.warn(
      `tessera: could not read stored weights from ${store.where} (${(e as Error).message}); loading ${header.file} from the checkpoint`,
    );
    return 'absent';
  }
  if (!chunks) return 'absent';
  const total = header.entries.reduce((a, e) => a + e.dataBytes + e.scaleBytes, 0);
  const r = await readStoredCopy(
    chunks,
    header,
    onEntry,
    (loadedBytes) => onProgressSafe(onProgress, { phase: 'cache', file: header.file, loadedBytes, totalBytes: total }),
    needSums,
  ).catch((e: unknown) => ({ ok: false as const, reason: `reading it failed: ${(e as Error).message}` }));
  if (r.ok) return { tensorSums: r.tensorSums };
  console.warn(`tessera: ${new StoredWeightsMismatchError(header.file, r.reason).message}`);
  await store.delete(header.key).catch(() => undefined);
  return 'mismatch';
}
