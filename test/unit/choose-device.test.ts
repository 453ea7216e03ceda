// device: 'auto' | 'webgpu' | 'wasm' | 'cpu' (src/engine/choose-device.ts), with each case the machine can
// present: no WebGPU at all (no navigator.gpu / no adapter), a fallback or software adapter, a hardware
// adapter; a checkpoint with and without its ONNX graphs; onnxruntime installed or not.

import { describe, expect, it, vi } from 'vitest';
import { chooseDevice, parseDeviceOption, type DeviceProbes } from '../../src/engine/choose-device';
import { MissingDependencyError, OnnxFilesMissingError, WebGpuUnavailableError } from '../../src/errors';
import type { AdapterReport } from '../../src/gpu/adapter-info';
import type { GpuContext } from '../../src/gpu/context';
import type { OrtRuntime } from '../../src/model/ort/ort-api';

function adapter(over: Partial<AdapterReport>): AdapterReport {
  return {
    vendor: 'nvidia',
    architecture: 'ada',
    device: '',
    description: 'RTX 4090',
    isFallbackAdapter: false,
    isCpu: false,
    features: [],
    limits: {},
    kernelVariant: 'workgroup',
    source: 'browser',
    ...over,
  };
}

const HARDWARE = adapter({});
const SOFTWARE = adapter({
  vendor: 'google',
  architecture: 'swiftshader',
  description: 'SwiftShader',
  isCpu: true,
  kernelVariant: 'register',
});
const FALLBACK = adapter({ vendor: '', architecture: '', description: 'fallback', isFallbackAdapter: true, isCpu: true });
const ORT = { ort: {} as OrtRuntime['ort'], provider: 'wasm' } as OrtRuntime;

function probes(gpu: AdapterReport | Error, opts: { missing?: string[]; ort?: 'ok' | 'missing' } = {}) {
  const destroy = vi.fn();
  const p: DeviceProbes = {
    gpu: async () => {
      if (gpu instanceof Error) throw gpu;
      return { adapter: gpu, destroy } as unknown as GpuContext;
    },
    ort: async (kind) => {
      if (opts.ort === 'missing')
        throw new MissingDependencyError(
          kind === 'cpu' ? 'onnxruntime-node' : 'onnxruntime-web',
          'the CPU backend',
          new Error('not found'),
        );
      return { ...ORT, provider: kind };
    },
    missingOnnx: async () => opts.missing ?? [],
    cpuKind: 'wasm',
    where: '/models/x/',
  };
  return { p, destroy };
}

describe("device: 'auto'", () => {
  it('takes WebGPU on a hardware adapter', async () => {
    const r = await chooseDevice('auto', probes(HARDWARE).p);
    expect(r.choice).toEqual({ backend: 'webgpu', reason: 'WebGPU on a hardware adapter (nvidia / ada / RTX 4090)' });
    expect(r.cpu).toBeUndefined();
  });

  it('takes the CPU backend with no navigator.gpu or no adapter, when the checkpoint has its ONNX graphs', async () => {
    for (const why of ['this browser has no navigator.gpu', 'no WebGPU adapter was found']) {
      const r = await chooseDevice('auto', probes(new WebGpuUnavailableError(why)).p);
      expect(r.choice.backend).toBe('wasm');
      expect(r.choice.reason).toContain(`there is no WebGPU (${why})`);
      expect(r.gpu).toBeUndefined();
    }
  });

  it('takes the CPU backend over a software or fallback adapter, and gives that device back', async () => {
    for (const a of [SOFTWARE, FALLBACK]) {
      const { p, destroy } = probes(a);
      const r = await chooseDevice('auto', p);
      expect(r.choice.backend).toBe('wasm');
      expect(r.choice.reason).toMatch(/^the only WebGPU adapter is a software one .*; the checkpoint has ONNX graphs/);
      expect(r.gpu).toBeUndefined();
      expect(destroy).toHaveBeenCalledOnce();
    }
  });

  it('stays on a software adapter when the checkpoint has no ONNX graphs or onnxruntime is not installed, and says why', async () => {
    const noFiles = await chooseDevice('auto', probes(SOFTWARE, { missing: ['onnx/embed_tokens.onnx'] }).p);
    expect(noFiles.choice.backend).toBe('webgpu');
    expect(noFiles.choice.reason).toContain('no ONNX graphs (onnx/embed_tokens.onnx)');
    const noOrt = await chooseDevice('auto', probes(SOFTWARE, { ort: 'missing' }).p);
    expect(noOrt.choice.backend).toBe('webgpu');
    expect(noOrt.choice.reason).toContain('onnxruntime-web is not installed (npm install onnxruntime-web');
  });

  it('with no WebGPU and no ONNX graphs: OnnxFilesMissingError listing the files; with no onnxruntime: MissingDependencyError', async () => {
    const files = await chooseDevice(
      'auto',
      probes(new WebGpuUnavailableError('no adapter'), { missing: ['onnx/a.onnx', 'onnx/b.onnx'] }).p,
    ).catch((e) => e);
    expect(files).toBeInstanceOf(OnnxFilesMissingError);
    expect(files.message).toContain('/models/x/ has no ONNX graphs for the CPU backend (looked for onnx/a.onnx, onnx/b.onnx)');
    const ort = await chooseDevice('auto', probes(new WebGpuUnavailableError('no adapter'), { ort: 'missing' }).p).catch((e) => e);
    expect(ort).toBeInstanceOf(MissingDependencyError);
    // Node with neither package: the error names webgpu and says onnxruntime would do too.
    const noWebgpu = new MissingDependencyError('webgpu', "Dawn's WebGPU for Node", new Error("Cannot find package 'webgpu'"));
    const neither = await chooseDevice('auto', probes(noWebgpu, { ort: 'missing' }).p).catch((e) => e);
    expect(neither).toBeInstanceOf(MissingDependencyError);
    expect(neither.message).toContain(
      "the 'webgpu' package (WebGPU; or install onnxruntime-web for the CPU backend) could not be loaded: Cannot find package 'webgpu'",
    );
    expect(neither.message).toContain('npm install webgpu');
  });
});

describe('asked for by name', () => {
  it("'webgpu' never falls back; 'cpu' and 'wasm' do not touch WebGPU", async () => {
    await expect(chooseDevice('webgpu', probes(new WebGpuUnavailableError('none')).p)).rejects.toBeInstanceOf(WebGpuUnavailableError);
    expect((await chooseDevice('webgpu', probes(SOFTWARE).p)).choice.backend).toBe('webgpu');
    const gpu = vi.fn();
    for (const d of ['cpu', 'wasm'] as const) {
      const { p } = probes(HARDWARE);
      const r = await chooseDevice(d, { ...p, gpu });
      expect(r.choice.backend).toBe(d);
      expect(r.cpu?.provider).toBe(d);
    }
    expect(gpu).not.toHaveBeenCalled();
  });

  it('an unknown name is refused with the ones that exist', () => {
    expect(parseDeviceOption(undefined)).toBe('auto');
    expect(() => parseDeviceOption('gpu')).toThrow(`device must be one of 'auto', 'webgpu', 'wasm', 'cpu'; got "gpu"`);
  });
});
