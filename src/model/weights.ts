// Load a checkpoint's weights onto the GPU: find its safetensors file(s), check every tensor name and
// shape against the config BEFORE uploading anything from a file, then stream each tensor to its
// place in the (possibly fused) GPU tensor as soon as its bytes arrive.
//
//   single file:  model.safetensors                   header checked -> upload
//   sharded:      model.safetensors.index.json         every name checked against weight_map first,
//                 model-0000k-of-0000n.safetensors     then each shard's header -> its uploads

import { CheckpointFormatError, InternalError, MissingTensorError, TensorShapeError } from '../errors';
import type { GpuContext } from '../gpu/context';
import { STORAGE_USAGE } from '../gpu/flags';
import type { Tensor } from '../gpu/tensor';
import type { ModelConfig } from './config';
import { streamSafetensors, toFloat32, type SafetensorsHeader, type TensorInfo } from './safetensors';
import { checkCheckpointFileName } from '../io/checkpoint-path';
import type { ModelSource } from '../io/model-source';
import { checkFiniteWeights } from './weight-checks';
import { weightLayout, type CheckpointTensorSpec, type WeightLayout } from './weight-layout';

export interface LoadProgress {
  phase: 'download' | 'upload';
  file: string;
  loadedBytes: number;
  totalBytes: number | undefined;
}

export type ProgressCallback = (p: LoadProgress) => void;

export class ModelWeights {
  private destroyed = false;

  constructor(
    private readonly gpu: GpuContext,
    private readonly tensors: Map<string, Tensor>,
    readonly layout: WeightLayout,
    readonly sizeBytes: number,
  ) {}

  get(key: string): Tensor {
    const t = this.tensors.get(key) ?? this.tensors.get(this.layout.aliases[key] ?? '');
    if (!t) throw new InternalError(`no weight '${key}'`);
    return t;
  }

  destroy(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    for (const t of this.tensors.values()) this.gpu.memory.destroyBuffer(t.buffer);
  }
}

const sameShape = (a: readonly number[], b: readonly number[]) => a.length === b.length && a.every((d, i) => d === b[i]);

/** Which file holds each expected tensor. */
async function planFiles(source: ModelSource, expected: CheckpointTensorSpec[]): Promise<Map<string, CheckpointTensorSpec[]>> {
  const indexText = await source.readText('model.safetensors.index.json');
  const byFile = new Map<string, CheckpointTensorSpec[]>();
  if (indexText === undefined) {
    byFile.set('model.safetensors', expected);
    return byFile;
  }
  let weightMap: Record<string, string>;
  try {
    weightMap = JSON.parse(indexText).weight_map;
  } catch (e) {
    throw new CheckpointFormatError(`model.safetensors.index.json is not valid JSON: ${(e as Error).message}`);
  }
  if (!weightMap || typeof weightMap !== 'object') throw new CheckpointFormatError('model.safetensors.index.json has no weight_map');
  for (const spec of expected) {
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

/** Which GPU weights to load: all, or only the vision side (an encoder worker) or only the text side. */
export type WeightSelection = 'all' | 'vision' | 'text';

export function selects(selection: WeightSelection, gpuKey: string): boolean {
  if (selection === 'all') return true;
  const vision = gpuKey.startsWith('vision.') || gpuKey === 'connector.w';
  return selection === 'vision' ? vision : !vision;
}

export async function loadWeights(
  gpu: GpuContext,
  source: ModelSource,
  config: ModelConfig,
  onProgress?: ProgressCallback,
  selection: WeightSelection = 'all',
  /** Sees each selected tensor's stored bytes once checked, before upload (the encoder's weights digest). */
  onTensor?: (info: TensorInfo, bytes: Uint8Array) => void | Promise<void>,
): Promise<ModelWeights> {
  const full = weightLayout(config);
  const layout: WeightLayout = {
    gpu: full.gpu.filter((w) => selects(selection, w.key)),
    checkpoint: full.checkpoint.filter((t) => selects(selection, t.target)),
    aliases: Object.fromEntries(Object.entries(full.aliases).filter(([k]) => selects(selection, k))),
  };
  const byFile = await planFiles(source, layout.checkpoint);
  const tensors = new Map<string, Tensor>();
  let sizeBytes = 0;
  const allocate = () => {
    for (const w of layout.gpu) {
      const numel = w.shape.reduce((a, b) => a * b, 1);
      const size = Math.max(4, numel * 4);
      if (size > gpu.limits.maxBufferSize) {
        throw new CheckpointFormatError(`weight ${w.key} needs ${size} bytes but this GPU's maxBufferSize is ${gpu.limits.maxBufferSize}`);
      }
      const buffer = gpu.memory.createBuffer({ label: `weight:${w.key}`, size, usage: STORAGE_USAGE });
      tensors.set(w.key, { buffer, shape: w.shape, dtype: 'f32', offsetBytes: 0, label: w.key });
      sizeBytes += size;
    }
  };
  const weights = new ModelWeights(gpu, tensors, layout, 0);
  try {
    for (const [file, specs] of byFile) {
      const opened = await source.openBytes(file, (loadedBytes, totalBytes) =>
        onProgress?.({ phase: 'download', file, loadedBytes, totalBytes }),
      );
      if (!opened) {
        throw new MissingTensorError(specs[0].name, specs[0].shape, `${source.where} (the file ${file} does not exist)`);
      }
      const wanted = new Map(specs.map((s) => [s.name, s]));
      const tensorStream = streamSafetensors(
        opened.stream,
        file,
        (header) => {
          checkHeader(file, header, specs);
          if (tensors.size === 0) allocate();
        },
        (loadedBytes) => onProgress?.({ phase: 'upload', file, loadedBytes, totalBytes: opened.sizeBytes }),
        opened.sizeBytes,
      );
      for await (const { info, bytes } of tensorStream) {
        const spec = wanted.get(info.name);
        if (!spec) continue; // e.g. an lm_head.weight next to tied embeddings
        const target = tensors.get(spec.target)!;
        const values = toFloat32(info, bytes);
        checkFiniteWeights(values, info.name, file);
        await onTensor?.(info, bytes);
        gpu.device.queue.writeBuffer(target.buffer, spec.offsetElems * 4, values);
      }
    }
  } catch (e) {
    weights.destroy();
    throw e;
  }
  await gpu.sync();
  return new ModelWeights(gpu, tensors, layout, sizeBytes);
}
