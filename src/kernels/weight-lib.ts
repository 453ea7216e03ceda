// The WGSL a kernel reads its weight operand through (shaders/lib/weights-*.wgsl, interface listed in
// weights-f32.wgsl), the bindings that go with it, and shader assembly: `enable` directives first, then
// the libs, then the kernel's own file (the assembled text is the pipeline cache key).

import activationSource from '../../shaders/lib/activation.wgsl?raw';
import f16MathSource from '../../shaders/lib/weights-f16-math.wgsl?raw';
import f16Source from '../../shaders/lib/weights-f16.wgsl?raw';
import f32ScalarSource from '../../shaders/lib/weights-f32-scalar.wgsl?raw';
import f32Source from '../../shaders/lib/weights-f32.wgsl?raw';
import q4Source from '../../shaders/lib/weights-q4.wgsl?raw';
import q8Source from '../../shaders/lib/weights-q8.wgsl?raw';
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
  const lib = formatLib(format, options);
  return { source: `${xGroupSource}\n${lib.source}`, enables: lib.enables };
}

function formatLib(format: WeightFormat, options: WeightLibOptions): WeightLib {
  switch (format) {
    case 'f32':
      return { source: options.scalarF32 ? f32ScalarSource : f32Source, enables: [] };
    case 'f16':
      return options.f16Math ? { source: f16MathSource, enables: ['f16'] } : { source: f16Source, enables: [] };
    case 'q8':
      return { source: q8Source, enables: [] };
    case 'q4':
      return { source: q4Source, enables: [] };
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
