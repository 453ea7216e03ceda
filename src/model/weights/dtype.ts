// Which storage format each GPU weight gets, from the caller's `dtype` (createEngine({ dtype }),
// `tessera run --dtype`), and which precision f16 weights are multiplied in (`compute`).
//
//   dtype: 'f32' | 'f16' | 'q8' | 'q4'           every weight matrix of the model
//          { vision?, audio?, text? }             per part (vision tower + connector / audio encoder +
//                                                 projector / decoder + LM head)
//   'f32' means f32 values, stored exactly: a matrix whose checkpoint tensors are all BF16 keeps them as
//   bf16 (its f32 values are those bf16 values, so nothing is rounded), in half the memory and with half
//   the loads per weight; F32 and F16 tensors are stored as f32.
//   Only 2-D weights the kernels read through lib/weights-*.wgsl are packed (linear layers, the patch
//   embedding, the position and token embedding tables, the LM head); norms and biases stay f32, and so
//   does any matrix whose row length K is not a multiple of 4 (the packed formats read 4 values at once).
//
//   compute: 'f32' (default) | 'f16'             f16 math for f16 weights in the decode kernels, only
//          on a device with `shader-f16`; elsewhere it falls back to f32 with one warning.

import { UnknownDtypeError } from '../../errors';
import type { GpuContext } from '../../gpu/context';
import { isKQuant, type KQuantFormat } from '../../kernels/k-quants';
import { formatSupportsK, WEIGHT_FORMATS, type WeightFormat } from '../../kernels/weight-format';
import type { GpuWeightSpec } from '../weight-layout';

/**
 * What a caller may ask for; bf16 is a storage format only (exact storage of BF16 tensors under 'f32'),
 * and the K-quant formats hold a GGUF file's blocks (nothing quantizes to them).
 */
export type WeightDtype = Exclude<WeightFormat, 'bf16' | KQuantFormat>;
const WEIGHT_DTYPES: readonly WeightDtype[] = WEIGHT_FORMATS.filter((f): f is WeightDtype => f !== 'bf16' && !isKQuant(f));

export type DtypeOption = WeightDtype | { vision?: WeightDtype; audio?: WeightDtype; text?: WeightDtype };

/** The parts of a model whose weights may be stored in different formats. */
const WEIGHT_PARTS = ['vision', 'audio', 'text'] as const;
export type WeightPart = (typeof WEIGHT_PARTS)[number];

export type DtypePlan = Record<WeightPart, WeightDtype>;

const isPart = (key: string): key is WeightPart => (WEIGHT_PARTS as readonly string[]).includes(key);

export type ComputePrecision = 'f32' | 'f16';
const COMPUTE_PRECISIONS: readonly ComputePrecision[] = ['f32', 'f16'];

function check(where: string, value: unknown): WeightDtype {
  if (typeof value === 'string' && (WEIGHT_DTYPES as readonly string[]).includes(value)) return value as WeightDtype;
  throw new UnknownDtypeError(where, value, WEIGHT_DTYPES);
}

/** A compute option from text (the CLI's --compute): 'f32' or 'f16', else an UnknownDtypeError. */
export function chooseComputePrecisionOption(text: string): ComputePrecision {
  if (text === 'f32' || text === 'f16') return text;
  throw new UnknownDtypeError('--compute', text, COMPUTE_PRECISIONS);
}

/** The per-part plan for a dtype option (default f32); an unknown value is an UnknownDtypeError. */
export function resolveDtype(option: unknown, where = 'dtype'): DtypePlan {
  if (option === undefined) return { vision: 'f32', audio: 'f32', text: 'f32' };
  if (typeof option === 'object' && option !== null && !Array.isArray(option)) {
    const o = option as Record<string, unknown>;
    for (const key of Object.keys(o)) {
      if (!isPart(key)) throw new UnknownDtypeError(`${where}.${key} (parts are ${WEIGHT_PARTS.join(', ')})`, o[key], WEIGHT_DTYPES);
    }
    const part = (key: WeightPart) => (o[key] === undefined ? 'f32' : check(`${where}.${key}`, o[key]));
    return { vision: part('vision'), audio: part('audio'), text: part('text') };
  }
  const d = check(where, option);
  return { vision: d, audio: d, text: d };
}

/** 'vision=f16,text=q4' or 'q4' (the CLI's --dtype) to a DtypeOption. */
export function parseDtypeText(text: string, where = '--dtype'): DtypeOption {
  if (!text.includes('=')) return check(where, text);
  const out: { vision?: WeightDtype; audio?: WeightDtype; text?: WeightDtype } = {};
  for (const part of text.split(',')) {
    const [key, value] = part.split('=').map((s) => s.trim());
    if (!isPart(key)) throw new UnknownDtypeError(`${where} part '${key}' (parts are ${WEIGHT_PARTS.join(', ')})`, value, WEIGHT_DTYPES);
    out[key] = check(`${where} ${key}`, value);
  }
  return out;
}

/**
 * The part a GPU weight belongs to: the connector travels with the vision tower and the projector with
 * the audio encoder (in encoder workers).
 */
export function partOf(gpuKey: string): WeightPart {
  if (gpuKey.startsWith('vision.') || gpuKey === 'connector.w') return 'vision';
  if (gpuKey.startsWith('audio.') || gpuKey.startsWith('projector.')) return 'audio';
  return 'text';
}

/** The storage format of one GPU weight under `plan`, before the checkpoint's dtypes are known. */
export function formatFor(plan: DtypePlan, spec: GpuWeightSpec): WeightDtype {
  if (spec.shape.length !== 2) return 'f32';
  const format = plan[partOf(spec.key)];
  return formatSupportsK(format, spec.shape[1]) ? format : 'f32';
}

/**
 * The storage format of one GPU weight, given the safetensors dtypes of the checkpoint tensors that fill
 * it (undefined where not known yet): an f32 matrix filled only by BF16 tensors is stored as bf16 (exact).
 */
export function storageFormatFor(plan: DtypePlan, spec: GpuWeightSpec, partDtypes: readonly (string | undefined)[]): WeightFormat {
  const format = formatFor(plan, spec);
  if (format !== 'f32' || spec.shape.length !== 2 || !formatSupportsK('bf16', spec.shape[1])) return format;
  return partDtypes.length > 0 && partDtypes.every((d) => d === 'BF16') ? 'bf16' : 'f32';
}

/** A short name for reports: 'q4', or 'vision f16 / text q4' (the parts a model has: default vision and text). */
export function describeDtype(plan: DtypePlan, parts: readonly WeightPart[] = ['vision', 'text']): string {
  const formats = parts.map((p) => plan[p]);
  return formats.every((f) => f === formats[0]) ? formats[0] : parts.map((p) => `${p} ${plan[p]}`).join(' / ');
}

/** The weight parts a model has (for describeDtype). */
export function modelParts(config: { vision?: unknown; audio?: unknown }): WeightPart[] {
  return [...(config.vision ? ['vision' as const] : []), ...(config.audio ? ['audio' as const] : []), 'text'];
}

export interface ComputeChoice {
  precision: ComputePrecision;
  /** Set when the request could not be met (one warning for the caller to show). */
  fallback?: string;
}

/**
 * The precision f16 weights are multiplied in. Decided once per load, from the features the device was
 * created with: f16 math needs `shader-f16`; without it the nearest supported precision (f32) is used.
 */
export function chooseComputePrecision(features: ReadonlySet<string>, requested: unknown = 'f32'): ComputeChoice {
  if (requested !== 'f32' && requested !== 'f16') throw new UnknownDtypeError('compute', requested, COMPUTE_PRECISIONS);
  if (requested === 'f16' && !features.has('shader-f16')) {
    return {
      precision: 'f32',
      fallback:
        "compute 'f16' needs the adapter feature shader-f16, which this device does not have; f16 weights are " +
        'unpacked and multiplied in f32 instead (same storage, slightly slower on GPUs with fast f16)',
    };
  }
  return { precision: requested };
}

/** chooseComputePrecision for a device, warning once through console.warn on a fallback. */
export function computePrecisionFor(gpu: GpuContext, requested: unknown): ComputePrecision {
  const choice = chooseComputePrecision(gpu.features, requested);
  if (choice.fallback) console.warn(`tessera: ${choice.fallback}`);
  return choice.precision;
}
