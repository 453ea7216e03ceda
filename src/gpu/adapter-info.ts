// What the adapter is and which kernel variant suits it. Chosen once per device.
//
// Kernel variants: CPU-emulated adapters (SwiftShader, lavapipe, WARP) run each workgroup's invocations
// as SIMD lanes on one CPU thread, so workgroup barriers are costly and register tiling wins by ~8x;
// real GPUs want workgroup-memory tiling. See docs/design.md, "Kernels".

export type KernelVariant = 'register' | 'workgroup';

export interface AdapterReport {
  vendor: string;
  architecture: string;
  device: string;
  description: string;
  isFallbackAdapter: boolean;
  /** True when the adapter emulates a GPU on the CPU. */
  isCpu: boolean;
  features: string[];
  limits: Record<string, number>;
  kernelVariant: KernelVariant;
  /** How the adapter was found: 'browser', 'node', or 'node-swiftshader' (Chromium's ICD picked automatically). */
  source: string;
}

/** Limits Tessera asks for at their adapter maximum, and reports. */
export const KEY_LIMITS = [
  'maxStorageBufferBindingSize',
  'maxBufferSize',
  'maxComputeWorkgroupStorageSize',
  'maxComputeInvocationsPerWorkgroup',
  'maxComputeWorkgroupSizeX',
  'maxComputeWorkgroupsPerDimension',
  'maxStorageBuffersPerShaderStage',
  'minStorageBufferOffsetAlignment',
] as const;

/** Optional features requested when the adapter has them. */
export const OPTIONAL_FEATURES = ['shader-f16', 'subgroups', 'timestamp-query'] as const;

const CPU_ADAPTER = /swiftshader|llvmpipe|lavapipe|warp|microsoft basic render/i;

export function describeAdapter(adapter: GPUAdapter, source: string, variant?: KernelVariant): AdapterReport {
  const info = adapter.info;
  const legacyFallback = (adapter as { isFallbackAdapter?: boolean }).isFallbackAdapter;
  const isFallbackAdapter = Boolean((info as { isFallbackAdapter?: boolean }).isFallbackAdapter ?? legacyFallback);
  const text = `${info.vendor} ${info.architecture} ${info.device} ${info.description}`;
  const isCpu = isFallbackAdapter || CPU_ADAPTER.test(text);
  const limits: Record<string, number> = {};
  for (const name of KEY_LIMITS) limits[name] = adapter.limits[name];
  return {
    vendor: info.vendor,
    architecture: info.architecture,
    device: info.device,
    description: info.description,
    isFallbackAdapter,
    isCpu,
    features: [...adapter.features].sort(),
    limits,
    kernelVariant: variant ?? (isCpu ? 'register' : 'workgroup'),
    source,
  };
}

export function adapterName(r: AdapterReport): string {
  const parts = [r.vendor, r.architecture, r.device, r.description].filter((s) => s && s.length > 0);
  return parts.join(' / ') || 'unnamed adapter';
}
