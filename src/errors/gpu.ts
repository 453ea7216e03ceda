// Errors of the GPU device and its environment: no WebGPU, a lost device, shaders that do not compile,
// validation, limits, shapes a kernel cannot take, out-of-range indices the kernels flag, a missing optional package.

import { TesseraError } from './base';

/** No WebGPU implementation, or no adapter that can run Tessera's kernels. */
export class WebGpuUnavailableError extends TesseraError {
  override readonly name = 'WebGpuUnavailableError';
  readonly code = 'WEBGPU_UNAVAILABLE';
}

/** The GPUDevice was lost (driver reset, out of memory, or destroy()). An engine recreates its device on the next request. */
export class DeviceLostError extends TesseraError {
  override readonly name = 'DeviceLostError';
  readonly code = 'DEVICE_LOST';
  constructor(
    readonly reason: string,
    detail: string,
  ) {
    super(
      `GPU device lost (reason: ${reason}): ${detail || 'no detail from the driver'}. ` +
        'This often means the GPU ran out of memory or the driver reset. The requests in flight failed; an engine ' +
        'recreates its device and model on the next request (send it again), a bare GpuContext must be created anew.',
    );
  }
}

export interface CompilerMessage {
  type: 'error' | 'warning' | 'info';
  lineNum: number;
  linePos: number;
  message: string;
}

/** WGSL failed to compile, or a pipeline failed validation. Carries the compiler's messages. */
export class ShaderCompileError extends TesseraError {
  override readonly name = 'ShaderCompileError';
  readonly code = 'SHADER_COMPILE';
  constructor(
    readonly label: string,
    readonly messages: readonly CompilerMessage[],
    detail?: string,
  ) {
    const lines = messages.map((m) => `  ${label}:${m.lineNum}:${m.linePos} ${m.type}: ${m.message}`);
    super(`WGSL for '${label}' did not compile${detail ? ` (${detail})` : ''}:\n${lines.join('\n') || '  (no compiler messages)'}`);
  }
}

/** A WebGPU validation error raised while creating or running a labelled object. */
export class GpuValidationError extends TesseraError {
  override readonly name = 'GpuValidationError';
  readonly code = 'GPU_VALIDATION';
  constructor(
    readonly label: string,
    gpuMessage: string,
  ) {
    super(`WebGPU rejected '${label}': ${gpuMessage}`);
  }
}

/** A tensor given to a kernel has the wrong shape or size. */
export class ShapeMismatchError extends TesseraError {
  override readonly name = 'ShapeMismatchError';
  readonly code = 'SHAPE_MISMATCH';
  constructor(
    readonly kernel: string,
    readonly operand: string,
    readonly expected: readonly number[] | number,
    readonly actual: readonly number[] | number,
  ) {
    super(
      `${kernel}: '${operand}' has shape ${fmt(actual)} but the kernel needs ${fmt(expected)}; ` +
        'check the tensor you passed for this operand.',
    );
  }
}

/** A tensor's shape needs more bytes than its GPUBuffer holds (mismatched buffer size). */
export class BufferSizeError extends TesseraError {
  override readonly name = 'BufferSizeError';
  readonly code = 'BUFFER_SIZE';
  constructor(
    readonly kernel: string,
    readonly operand: string,
    readonly neededBytes: number,
    readonly bufferBytes: number,
    offsetBytes: number,
  ) {
    super(
      `${kernel}: '${operand}' needs ${neededBytes} bytes from offset ${offsetBytes} but its buffer holds ` +
        `${bufferBytes}; allocate a larger buffer or fix the tensor's shape.`,
    );
  }
}

/** A tensor given to a kernel has the wrong dtype. */
export class DtypeMismatchError extends TesseraError {
  override readonly name = 'DtypeMismatchError';
  readonly code = 'DTYPE_MISMATCH';
  constructor(
    readonly kernel: string,
    readonly operand: string,
    readonly expected: string,
    readonly actual: string,
  ) {
    super(`${kernel}: '${operand}' has dtype ${actual} but the kernel needs ${expected}; convert it before the call.`);
  }
}

/** A kernel's shape needs more than the device allows (binding size, workgroups, workgroup memory). */
export class DeviceLimitError extends TesseraError {
  override readonly name = 'DeviceLimitError';
  readonly code = 'DEVICE_LIMIT';
  constructor(
    readonly kernel: string,
    readonly limit: string,
    readonly requested: number,
    readonly allowed: number,
    advice = 'use a smaller batch or split the work.',
  ) {
    super(`${kernel}: needs ${limit} = ${requested} but this device allows ${allowed}; ${advice}`);
  }
}

/** A shape or option the kernel does not implement (for example a head size other than its fixed one). */
export class UnsupportedShapeError extends TesseraError {
  override readonly name = 'UnsupportedShapeError';
  readonly code = 'UNSUPPORTED_SHAPE';
}

function fmt(v: readonly number[] | number): string {
  return typeof v === 'number' ? String(v) : `[${v.join(', ')}]`;
}

/** A package Tessera needs here is not installed (Node: `webgpu` for WebGPU, `sharp` for images). */
export class MissingDependencyError extends TesseraError {
  override readonly name = 'MissingDependencyError';
  readonly code = 'MISSING_DEPENDENCY';
  constructor(
    readonly packageName: string,
    purpose: string,
    cause: unknown,
  ) {
    const why = cause instanceof Error ? cause.message : String(cause);
    super(
      `the '${packageName}' package (${purpose}) could not be loaded: ${why}. tessera/node needs it and does not ` +
        `install it for you (browser apps never load it); add it to your app: npm install ${packageName}`,
      { cause },
    );
  }
}

/**
 * A kernel met an out-of-range index on the GPU (a token id past the vocabulary, a KV slot past the cache,
 * a position past the RoPE table, a splice row past the step). The GPU skipped those writes and counted
 * them; the step's requests are failed because their state cannot be trusted. A bug in Tessera.
 */
export class GpuBoundsError extends TesseraError {
  override readonly name = 'GpuBoundsError';
  readonly code = 'GPU_BOUNDS';
  constructor(readonly flags: ReadonlyArray<{ kernel: string; count: number; maxIndex: number }>) {
    super(
      `GPU kernels skipped out-of-range indices in one model step: ${flags
        .map((f) => `${f.kernel} ${f.count} (largest ${f.maxIndex})`)
        .join(
          ', ',
        )}; the requests in that step were failed and the engine goes on. This is a bug in Tessera: please report it with these numbers.`,
    );
  }
}

/**
 * The engine's backend cannot do what was asked: the CPU backend (onnxruntime) has no GPU dispatches to
 * profile and no audio graphs. Says which backend ran and what to use instead.
 */
export class BackendUnsupportedError extends TesseraError {
  override readonly name = 'BackendUnsupportedError';
  readonly code = 'BACKEND_UNSUPPORTED';
  constructor(
    readonly backend: string,
    readonly what: string,
    instead: string,
  ) {
    super(`${what} is not available on the ${backend} backend; ${instead}`);
  }
}

/**
 * onnxruntime-web could not load its WebAssembly in this page or worker (the CPU backend): typically a dev
 * server that pre-bundled it and then answered the .wasm request with an HTML page. Says what to change.
 */
export class OnnxRuntimeLoadError extends TesseraError {
  override readonly name = 'OnnxRuntimeLoadError';
  readonly code = 'ONNXRUNTIME_LOAD';
}
