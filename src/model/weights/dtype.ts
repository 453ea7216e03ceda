// Which storage format each GPU weight gets, from the caller's `dtype` (createEngine({ dtype }),
// `tessera run --dtype`), and which precision f16 weights are multiplied in (`compute`).
//
//   dtype: 'f32' | 'f16' | 'q8' | 'q4'           every weight matrix of the model
//          { vision?: ..., text?: ... }           per part (vision tower + connector / decoder + LM head)
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
import { formatSupportsK, WEIGHT_FORMATS, type WeightFormat } from '../../kernels/weight-format';
import type { GpuWeightSpec } from '../weight-layout';

/** What a caller may ask for; bf16 is a storage format only (exact storage of BF16 tensors under 'f32'). */
export type WeightDtype = Exclude<WeightFormat, 'bf16'>;
export const WEIGHT_DTYPES: readonly WeightDtype[] = WEIGHT_FORMATS.filter((f): f is WeightDtype => f !== 'bf16');

export type DtypeOption = WeightDtype | { vision?: WeightDtype; text?: WeightDtype };

export interface DtypePlan {
  vision: WeightDtype;
  text: WeightDtype;
}

export type ComputePrecision = 'f32' | 'f16';
export const COMPUTE_PRECISIONS: readonly ComputePrecision[] = ['f32', 'f16'];

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
  if (option === undefined) return { vision: 'f32', text: 'f32' };
  if (typeof option === 'object' && option !== null && !Array.isArray(option)) {
    const o = option as Record<string, unknown>;
    for (const key of Object.keys(o)) {
      if (key !== 'vision' && key !== 'text')
        throw new UnknownDtypeError(`${where}.${key} (parts are vision and text)`, o[key], WEIGHT_DTYPES);
    }
    return {
      vision: o.vision === undefined ? 'f32' : check(`${where}.vision`, o.vision),
      text: o.text === undefined ? 'f32' : check(`${where}.text`, o.text),
    };
  }
  const d = check(where, option);
  return { vision: d, text: d };
}

/** 'vision=f16,text=q4' or 'q4' (the CLI's --dtype) to a DtypeOption. */
export function parseDtypeText(text: string, where = '--dtype'): DtypeOption {
  if (!text.includes('=')) return check(where, text);
  const out: { vision?: WeightDtype; text?: WeightDtype } = {};
  for (const part of text.split(',')) {
    const [key, value] = part.split('=').map((s) => s.trim());
    if (key !== 'vision' && key !== 'text')
      throw new UnknownDtypeError(`${where} part '${key}' (parts are vision and text)`, value, WEIGHT_DTYPES);
    out[key] = check(`${where} ${key}`, value);
  }
  return out;
}

/** The part a GPU weight belongs to (the connector travels with the vision tower, in encoder workers). */
export function partOf(gpuKey: string): 'vision' | 'text' {
  return gpuKey.startsWith('vision.') || gpuKey === 'connector.w' ? 'vision' : 'text';
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

/** A short name for reports: 'q4', or 'vision f16 / text q4'. */
export function describeDtype(plan: DtypePlan): string {
  return plan.vision === plan.text ? plan.vision : `vision ${plan.vision} / text ${plan.text}`;
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
