// Which backend runs the model: createEngine's `device` option ('auto' | 'webgpu' | 'wasm' | 'cpu',
// transformers.js's names) and, for 'auto', what the machine offers:
//
//   a hardware WebGPU adapter                                  -> WebGPU
//   no WebGPU (no navigator.gpu / no adapter) or only a        -> the CPU backend (onnxruntime) when the
//   fallback/software adapter (SwiftShader: ~30x slower than      checkpoint has its ONNX graphs and
//   a CPU library)                                                onnxruntime loads
//     ... the checkpoint has no ONNX graphs, or no onnxruntime -> a software adapter still runs (WebGPU on
//                                                                 the CPU, said so); with none at all,
//                                                                 OnnxFilesMissingError / MissingDependencyError
//
// The factories (create-node.ts, create-browser.ts) pass their own probes; the rules live here once.

import { MissingDependencyError, OnnxFilesMissingError, WebGpuUnavailableError } from '../errors';
import { adapterName } from '../gpu/adapter-info';
import type { GpuContext } from '../gpu/context';
import type { OrtRuntime } from '../model/ort/ort-api';
import type { DeviceChoice } from './engine-model';

export type DeviceOption = 'auto' | 'webgpu' | 'wasm' | 'cpu';
const DEVICE_OPTIONS: readonly DeviceOption[] = ['auto', 'webgpu', 'wasm', 'cpu'];

export interface DeviceProbes {
  /** A WebGPU context (WebGpuUnavailableError when there is none). */
  gpu(): Promise<GpuContext>;
  /** onnxruntime for the CPU backend: 'cpu' (onnxruntime-node) or 'wasm' (onnxruntime-web). */
  ort(kind: 'cpu' | 'wasm'): Promise<OrtRuntime>;
  /** The ONNX files the checkpoint lacks (empty: it has them all). */
  missingOnnx(): Promise<string[]>;
  /** The CPU backend 'auto' uses here: 'cpu' in Node, 'wasm' in a browser. */
  cpuKind: 'cpu' | 'wasm';
  /** The checkpoint's location, for errors. */
  where: string;
}

export interface ChosenDevice {
  choice: DeviceChoice;
  gpu?: GpuContext;
  cpu?: OrtRuntime;
}

export function parseDeviceOption(value: unknown, where = 'device'): DeviceOption {
  if (value === undefined) return 'auto';
  if (typeof value === 'string' && (DEVICE_OPTIONS as readonly string[]).includes(value)) return value as DeviceOption;
  throw new TypeError(`${where} must be one of ${DEVICE_OPTIONS.map((d) => `'${d}'`).join(', ')}; got ${JSON.stringify(value)}`);
}

export async function chooseDevice(option: DeviceOption, probes: DeviceProbes): Promise<ChosenDevice> {
  if (option === 'webgpu') {
    const gpu = await probes.gpu();
    return { gpu, choice: { backend: 'webgpu', reason: `WebGPU, asked for (${adapterName(gpu.adapter)})` } };
  }
  if (option === 'cpu' || option === 'wasm') {
    const cpu = await probes.ort(option);
    return {
      cpu,
      choice: {
        backend: option,
        reason: `the CPU backend (${cpu.label ?? `onnxruntime ${option === 'cpu' ? 'CPU' : 'WebAssembly'}`}), asked for`,
      },
    };
  }
  let gpu: GpuContext | undefined;
  let noGpu: unknown;
  try {
    gpu = await probes.gpu();
  } catch (e) {
    if (!(e instanceof WebGpuUnavailableError) && !(e instanceof MissingDependencyError)) throw e;
    noGpu = e;
  }
  if (gpu && !gpu.adapter.isCpu) {
    return { gpu, choice: { backend: 'webgpu', reason: `WebGPU on a hardware adapter (${adapterName(gpu.adapter)})` } };
  }
  const why = gpu
    ? `the only WebGPU adapter is a software one (${adapterName(gpu.adapter)}), many times slower than a CPU library`
    : `there is no WebGPU (${(noGpu as Error).message.split('. ')[0]})`;
  const missing = await probes.missingOnnx();
  if (missing.length > 0) {
    if (gpu)
      return {
        gpu,
        choice: {
          backend: 'webgpu',
          reason: `${why}; the checkpoint has no ONNX graphs (${missing.join(', ')}) for the CPU backend, so WebGPU runs on the CPU`,
        },
      };
    throw new OnnxFilesMissingError(probes.where, missing, why);
  }
  try {
    const cpu = await probes.ort(probes.cpuKind);
    gpu?.destroy();
    return {
      cpu,
      choice: {
        backend: probes.cpuKind,
        reason: `${why}; the checkpoint has ONNX graphs, so the CPU backend (${cpu.label ?? 'onnxruntime'}) runs it`,
      },
    };
  } catch (e) {
    if (!(e instanceof MissingDependencyError)) throw e;
    if (!gpu) {
      // Neither backend can start: name WebGPU's package when that is what is missing, and the other way.
      if (noGpu instanceof MissingDependencyError) {
        throw new MissingDependencyError(
          noGpu.packageName,
          `WebGPU; or install ${e.packageName} for the CPU backend`,
          noGpu.cause ?? noGpu,
        );
      }
      throw e;
    }
    return {
      gpu,
      choice: {
        backend: 'webgpu',
        reason: `${why}; ${e.packageName} is not installed (npm install ${e.packageName} for the faster CPU backend), so WebGPU runs on the CPU`,
      },
    };
  }
}
