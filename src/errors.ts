// Named errors. Every message says what happened, gives the numbers, and says what to do.
// Each class carries a stable `code` so callers (and errors crossing a worker boundary) can branch on it.

export abstract class TesseraError extends Error {
  abstract readonly code: string;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** No WebGPU implementation, or no adapter that can run Tessera's kernels. */
export class WebGpuUnavailableError extends TesseraError {
  readonly code = 'WEBGPU_UNAVAILABLE';
}

/** The GPUDevice was lost (driver reset, out of memory, or destroy()). Recreate the engine to continue. */
export class DeviceLostError extends TesseraError {
  readonly code = 'DEVICE_LOST';
  constructor(
    readonly reason: string,
    detail: string,
  ) {
    super(
      `GPU device lost (reason: ${reason}): ${detail || 'no detail from the driver'}. ` +
        'This often means the GPU ran out of memory or the driver reset; create a new engine to continue.',
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
  readonly code = 'SHADER_COMPILE';
  constructor(
    readonly label: string,
    readonly messages: readonly CompilerMessage[],
    detail?: string,
  ) {
    const lines = messages.map((m) => `  ${label}:${m.lineNum}:${m.linePos} ${m.type}: ${m.message}`);
    super(
      `WGSL for '${label}' did not compile${detail ? ` (${detail})` : ''}:\n${lines.join('\n') || '  (no compiler messages)'}`,
    );
  }
}

/** A WebGPU validation error raised while creating or running a labelled object. */
export class GpuValidationError extends TesseraError {
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
  readonly code = 'DEVICE_LIMIT';
  constructor(
    readonly kernel: string,
    readonly limit: string,
    readonly requested: number,
    readonly allowed: number,
  ) {
    super(
      `${kernel}: needs ${limit} = ${requested} but this device allows ${allowed}; ` +
        'use a smaller batch or split the work.',
    );
  }
}

/** A shape or option the kernel does not implement (for example a head size other than its fixed one). */
export class UnsupportedShapeError extends TesseraError {
  readonly code = 'UNSUPPORTED_SHAPE';
}

/** A broken internal invariant: a bug in Tessera, not in the caller's input. */
export class InternalError extends TesseraError {
  readonly code = 'INTERNAL';
}

function fmt(v: readonly number[] | number): string {
  return typeof v === 'number' ? String(v) : `[${v.join(', ')}]`;
}
