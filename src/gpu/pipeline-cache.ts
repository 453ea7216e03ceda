// Compiles WGSL once per source and builds one pipeline per (source, entry point, override constants).
// Everything baked into a pipeline is in its key; everything else is a uniform.
// Modules are created inside a validation error scope and their getCompilationInfo() messages are
// turned into a ShaderCompileError that names the kernel's label.

import { GpuValidationError, ShaderCompileError, type CompilerMessage } from '../errors';
import type { PendingGpuOps } from './pending-ops';

export interface PipelineSpec {
  /** Kernel base name; labels the module and pipeline. */
  label: string;
  code: string;
  entryPoint?: string;
  constants?: Record<string, number>;
}

interface ModuleEntry {
  module: Promise<GPUShaderModule>;
  pipelines: Map<string, Promise<GPUComputePipeline>>;
}

export function pipelineKey(spec: PipelineSpec): string {
  const constants = Object.entries(spec.constants ?? {})
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join(',');
  return `${spec.entryPoint ?? 'main'}|${constants}`;
}

export class PipelineCache {
  private readonly modules = new Map<string, ModuleEntry>();

  constructor(
    private readonly device: GPUDevice,
    private readonly pending?: PendingGpuOps,
  ) {}

  private track<T>(what: string, p: Promise<T>): Promise<T> {
    return this.pending ? this.pending.track(what, p) : p;
  }

  get size(): number {
    let n = 0;
    for (const m of this.modules.values()) n += m.pipelines.size;
    return n;
  }

  get(spec: PipelineSpec): Promise<GPUComputePipeline> {
    let entry = this.modules.get(spec.code);
    if (!entry) {
      entry = { module: this.compile(spec.label, spec.code), pipelines: new Map() };
      this.modules.set(spec.code, entry);
      // A failed compile must not poison the cache: drop it so a retry compiles again.
      entry.module.catch(() => this.modules.delete(spec.code));
    }
    const key = pipelineKey(spec);
    let pipeline = entry.pipelines.get(key);
    if (!pipeline) {
      pipeline = this.build(entry.module, spec, key);
      entry.pipelines.set(key, pipeline);
      const pipelines = entry.pipelines;
      pipeline.catch(() => pipelines.delete(key));
    }
    return pipeline;
  }

  private async compile(label: string, code: string): Promise<GPUShaderModule> {
    this.device.pushErrorScope('validation');
    const module = this.device.createShaderModule({ label, code });
    const scopeError = await this.track(`popErrorScope (shader ${label})`, this.device.popErrorScope());
    const info = await this.track(`getCompilationInfo ${label}`, module.getCompilationInfo());
    const messages: CompilerMessage[] = info.messages.map((m) => ({
      type: m.type,
      lineNum: m.lineNum,
      linePos: m.linePos,
      message: m.message,
    }));
    if (scopeError || messages.some((m) => m.type === 'error')) {
      // The scope's message repeats the compiler's; keep it only when there is nothing else to show.
      throw new ShaderCompileError(label, messages, messages.length === 0 ? scopeError?.message : undefined);
    }
    return module;
  }

  private async build(modulePromise: Promise<GPUShaderModule>, spec: PipelineSpec, key: string) {
    const module = await modulePromise;
    const label = `${spec.label}[${key}]`;
    this.device.pushErrorScope('validation');
    let pipeline: GPUComputePipeline;
    try {
      pipeline = await this.track(
        `createComputePipelineAsync ${label}`,
        this.device.createComputePipelineAsync({
          label,
          layout: 'auto',
          compute: { module, entryPoint: spec.entryPoint ?? 'main', constants: spec.constants },
        }),
      );
    } catch (e) {
      await this.track(`popErrorScope (pipeline ${label})`, this.device.popErrorScope());
      throw new GpuValidationError(label, e instanceof Error ? e.message : String(e));
    }
    const scopeError = await this.track(`popErrorScope (pipeline ${label})`, this.device.popErrorScope());
    if (scopeError) throw new GpuValidationError(label, scopeError.message);
    return pipeline;
  }
}
