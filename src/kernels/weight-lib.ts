// The WGSL a kernel reads its weight operand through (shaders/lib/weights-*.wgsl, interface listed in
// weights-f32.wgsl), the bindings that go with it, and shader assembly: `enable` directives first, then
// the libs, then the kernel's own file (the assembled text is the pipeline cache key).

import activationSource from '../../shaders/lib/activation.wgsl?raw';
import f16MathSource from '../../shaders/lib/weights-f16-math.wgsl?raw';
import bf16Source from '../../shaders/lib/weights-bf16.wgsl?raw';
import f16Source from '../../shaders/lib/weights-f16.wgsl?raw';
import f32ScalarSource from '../../shaders/lib/weights-f32-scalar.wgsl?raw';
import f32Source from '../../shaders/lib/weights-f32.wgsl?raw';
import groupSource from '../../shaders/lib/weights-group.wgsl?raw';
import q4Source from '../../shaders/lib/weights-q4.wgsl?raw';
import q4kSource from '../../shaders/lib/weights-q4k.wgsl?raw';
import q5kSource from '../../shaders/lib/weights-q5k.wgsl?raw';
import q6kSource from '../../shaders/lib/weights-q6k.wgsl?raw';
import q8Source from '../../shaders/lib/weights-q8.wgsl?raw';
import dotGroupSource from '../../shaders/lib/weights-dot-group.wgsl?raw';
import dotRaw4Source from '../../shaders/lib/weights-dot-raw4.wgsl?raw';
import mul4Source from '../../shaders/lib/weights-mul4.wgsl?raw';
import unscaledSource from '../../shaders/lib/weights-unscaled.wgsl?raw';
import xPlainSource from '../../shaders/lib/weights-x-plain.wgsl?raw';
import xGroupSource from '../../shaders/lib/x-group.wgsl?raw';
import type { Tensor } from '../gpu/tensor';
import { isPacked, type Weight, type WeightFormat } from './weight-format';

/** The WGSL a kernel reads W through (shaders/lib/weights-*.wgsl; interface in weights-f32.wgsl). */
export interface WeightLib {
  source: string;
  /** `enable` directives the assembled shader must start with. */
  enables: readonly string[];
}

export interface WeightLibOptions {
  /** f32 read element by element (any K, any 4-byte alignment) instead of as vec4. */
  scalarF32?: boolean;
  /** f16 weights multiplied in f16 (needs the device's `shader-f16`; see chooseComputePrecision). */
  f16Math?: boolean;
}

export function weightLib(format: WeightFormat, options: WeightLibOptions = {}): WeightLib {
  const { parts, enables } = formatParts(format, options);
  const group = format === 'f16' && options.f16Math ? [] : [groupSource];
  return { source: [xGroupSource, ...group, ...parts, dotGroupSource].join('\n'), enables };
}

/**
 * The pieces that make one format's interface: its own file, plus the shared definitions it does not
 * specialise (w_mul4 through w_load4, x as it is, a whole group through w_raw4, no scales). Every format
 * gets the f32 group (lib/weights-group.wgsl) but f16 math, and w_dot_group (lib/weights-dot-group.wgsl).
 */
function formatParts(format: WeightFormat, options: WeightLibOptions): { parts: string[]; enables: string[] } {
  switch (format) {
    case 'f32':
      return options.scalarF32
        ? { parts: [f32ScalarSource, unscaledSource, mul4Source, xPlainSource, dotRaw4Source], enables: [] }
        : { parts: [f32Source, unscaledSource, mul4Source, xPlainSource], enables: [] };
    case 'f16':
      return options.f16Math
        ? { parts: [f16MathSource, unscaledSource, xPlainSource], enables: ['f16'] }
        : { parts: [f16Source, unscaledSource, mul4Source, xPlainSource, dotRaw4Source], enables: [] };
    case 'bf16':
      return { parts: [bf16Source, unscaledSource, mul4Source, xPlainSource, dotRaw4Source], enables: [] };
    case 'q8':
      return { parts: [q8Source, mul4Source, xPlainSource], enables: [] };
    case 'q4':
      return { parts: [q4Source, mul4Source], enables: [] };
    case 'q4k':
      return { parts: [q4kSource, mul4Source, xPlainSource], enables: [] };
    case 'q5k':
      return { parts: [q5kSource, mul4Source, xPlainSource], enables: [] };
    case 'q6k':
      return { parts: [q6kSource, mul4Source, xPlainSource], enables: [] };
  }
}

/** Storage bindings 1 and 2 of a kernel that reads W through a weights lib (null: not in the shader). */
export function weightBindings(w: Weight): [Tensor, Tensor | null] {
  if (!isPacked(w)) return [w, null];
  return [w.data, w.scales ?? null];
}

/** Assemble a shader: `enable` directives first, then the libs, then the kernel's own file. */
export function assembleWgsl(enables: readonly string[], ...parts: string[]): string {
  const head = [...new Set(enables)].map((e) => `enable ${e};`).join('\n');
  return [head, ...parts].filter((s) => s.length > 0).join('\n');
}

/** lib/activation.wgsl, for kernels with a fused activation epilogue. */
export const ACTIVATION_LIB = activationSource;
