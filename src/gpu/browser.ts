// GpuContext in a browser or worker: navigator.gpu.

import { WebGpuUnavailableError } from '../errors';
import { GpuContext, type GpuContextOptions } from './context';

export async function createBrowserGpuContext(options: GpuContextOptions = {}): Promise<GpuContext> {
  const gpu = (globalThis.navigator as Navigator | undefined)?.gpu;
  if (!gpu) {
    throw new WebGpuUnavailableError(
      'navigator.gpu is missing: this browser has no WebGPU. Use a current Chrome, Edge or Safari, ' +
        'or in Chromium without a GPU pass --enable-unsafe-webgpu --enable-unsafe-swiftshader.',
    );
  }
  const adapter = await gpu.requestAdapter({ powerPreference: 'high-performance' });
  if (!adapter) {
    throw new WebGpuUnavailableError(
      'navigator.gpu.requestAdapter() returned null: WebGPU is present but no adapter is available. ' +
        'Check chrome://gpu, or in headless Chromium pass --enable-unsafe-swiftshader --use-webgpu-adapter=swiftshader.',
    );
  }
  return GpuContext.fromAdapter(adapter, { source: 'browser', ...options });
}
