// GpuContext in Node through Dawn's `webgpu` package.
//
// Adapter search, in order:
//   1. Dawn's default (a real GPU through Vulkan/Metal/D3D when there is one). Never overridden.
//   2. Only if that finds nothing and VK_ICD_FILENAMES is unset: Chromium's SwiftShader Vulkan ICD
//      (a CPU implementation Dawn accepts; Mesa's lavapipe is rejected by Dawn).
// On Linux with no GPU device node at all (/dev/dri/renderD*, /dev/nvidia*, /dev/dxg) step 1 cannot
// find a GPU, so it is skipped; that also spares the log Dawn's warning about rejecting lavapipe.
// Dawn's GPU instance must stay reachable while its devices live: if it is garbage-collected, Dawn's
// event loop touches a freed instance and the process crashes (seen with webgpu@0.6.2). GpuContext
// holds it as `keepAlive`.
// `webgpu` is an optional peer dependency (browser apps never load it): a missing one is a
// MissingDependencyError that says to install it.

import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MissingDependencyError, WebGpuUnavailableError } from '../errors';
import { importOptional } from '../optional-dependency';
import { GpuContext, type GpuContextOptions } from './context';

/** Where Chromium and Chrome put SwiftShader's ICD manifest on Linux. */
const SWIFTSHADER_ICD_PATHS = [
  '/usr/lib/chromium/vk_swiftshader_icd.json',
  '/usr/lib64/chromium/vk_swiftshader_icd.json',
  '/usr/lib/chromium-browser/vk_swiftshader_icd.json',
  '/opt/google/chrome/vk_swiftshader_icd.json',
  '/snap/chromium/current/usr/lib/chromium-browser/vk_swiftshader_icd.json',
];

export function findSwiftShaderIcd(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const candidates = env.TESSERA_SWIFTSHADER_ICD ? [env.TESSERA_SWIFTSHADER_ICD] : SWIFTSHADER_ICD_PATHS;
  return candidates.find((p) => existsSync(p));
}

/** False only when this is Linux and no GPU device node exists, so no Vulkan GPU can be present. */
function mayHaveGpu(): boolean {
  if (process.platform !== 'linux') return true;
  if (existsSync('/dev/dxg') || existsSync('/dev/nvidia0')) return true;
  try {
    return readdirSync('/dev/dri').some((f) => f.startsWith('renderD'));
  } catch {
    return false;
  }
}

/**
 * Dawn option for exact GPU timestamps. Dawn rounds timestamp queries down to a multiple of 2^16 ns
 * (65.5 µs; seen with webgpu's Dawn on SwiftShader), a browser's guard against timing attacks that only
 * blurs profiles in Node (`tessera profile`, bench:model). It changes nothing else.
 */
export const DAWN_EXACT_TIMESTAMPS = 'disable-dawn-features=timestamp_quantization';

export interface NodeGpuOptions extends GpuContextOptions {
  /** Extra Dawn toggles, e.g. 'enable-dawn-features=dump_shaders'. */
  dawnOptions?: string[];
}

type DawnModule = { create(options: string[]): GPU };

/**
 * Dawn's Vulkan loader can load libwayland-client, which prints "error: XDG_RUNTIME_DIR is invalid or not
 * set in the environment." once per instance when the variable is unset (headless machines, CI, with
 * Mesa's device-select layer installed). Give it a private directory instead, before the first instance;
 * worker threads inherit it. A value the user set is left alone.
 */
function quietWayland(env: NodeJS.ProcessEnv = process.env): void {
  if (process.platform !== 'linux' || env.XDG_RUNTIME_DIR) return;
  const dir = join(tmpdir(), `tessera-runtime-${process.getuid?.() ?? 'user'}`);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  env.XDG_RUNTIME_DIR = dir;
}

export async function createNodeGpuContext(options: NodeGpuOptions = {}): Promise<GpuContext> {
  let dawn: DawnModule;
  try {
    dawn = (await importOptional('webgpu', "Dawn's WebGPU for Node", () => import('webgpu'))) as unknown as DawnModule;
  } catch (e) {
    if (e instanceof MissingDependencyError) throw e;
    throw new WebGpuUnavailableError(`the 'webgpu' package (Dawn for Node) could not be loaded: ${(e as Error).message}`, {
      cause: e,
    });
  }
  quietWayland();
  const dawnOptions = options.dawnOptions ?? [];
  let gpu: GPU | undefined;
  let adapter: GPUAdapter | null = null;
  let source = 'node';
  if (mayHaveGpu() || process.env.VK_ICD_FILENAMES) {
    gpu = dawn.create(dawnOptions);
    adapter = await gpu.requestAdapter({ powerPreference: 'high-performance' });
  }
  if (!adapter && !process.env.VK_ICD_FILENAMES) {
    const icd = findSwiftShaderIcd();
    if (icd) {
      process.env.VK_ICD_FILENAMES = icd;
      gpu = dawn.create(dawnOptions);
      adapter = await gpu.requestAdapter();
      source = 'node-swiftshader';
    }
  }
  if (!adapter) {
    throw new WebGpuUnavailableError(
      'Dawn found no WebGPU adapter. On a machine without a GPU install a CPU Vulkan driver Dawn accepts ' +
        "(Debian: 'apt-get install chromium libvulkan1' provides SwiftShader) or point VK_ICD_FILENAMES at a " +
        `Vulkan ICD manifest. Searched for SwiftShader at: ${SWIFTSHADER_ICD_PATHS.join(', ')}` +
        (process.env.VK_ICD_FILENAMES ? `; VK_ICD_FILENAMES is set to ${process.env.VK_ICD_FILENAMES}` : ''),
    );
  }
  return GpuContext.fromAdapter(adapter, { source, keepAlive: gpu, ...options });
}
