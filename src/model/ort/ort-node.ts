// onnxruntime in Node for the CPU backend: onnxruntime-node (its CPU execution provider; an optional peer
// dependency like `webgpu`), or onnxruntime-web's WebAssembly build ('wasm'). A missing package is
// MissingDependencyError, which says what to install.

import { importOptional } from '../../optional-dependency';
import type { OrtModule, OrtRuntime } from './ort-api';

export async function loadNodeOrt(kind: 'cpu' | 'wasm'): Promise<OrtRuntime> {
  if (kind === 'cpu') {
    const ort = await importOptional('onnxruntime-node', 'the CPU backend (onnxruntime)', () => import('onnxruntime-node'));
    return { ort: ((ort as { default?: unknown }).default ?? ort) as OrtModule, provider: 'cpu', label: 'onnxruntime CPU' };
  }
  const ort = await importOptional('onnxruntime-web', 'the CPU backend (onnxruntime, WebAssembly)', () => import('onnxruntime-web'));
  return { ort: ((ort as { default?: unknown }).default ?? ort) as unknown as OrtModule, provider: 'wasm' };
}
