// Errors of a checkpoint and its files: config values, unsupported architectures, safetensors format and
// truncation, missing or misshapen tensors, processor and chat-template files, weight dtypes and stored copies.

import { TesseraError } from './base';

/** config.json is malformed or inconsistent (a field missing, of the wrong type, or contradicting another). */
export class ModelConfigError extends TesseraError {
  override readonly name = 'ModelConfigError';
  readonly code = 'MODEL_CONFIG';
}

/** The checkpoint is of an architecture or option Tessera does not run (model_type, activation, ...). */
export class UnsupportedModelError extends TesseraError {
  override readonly name = 'UnsupportedModelError';
  readonly code = 'UNSUPPORTED_MODEL';
}

/** A checkpoint file is not what its name says: a bad safetensors header, a cut-off file, a bad index. */
export class CheckpointFormatError extends TesseraError {
  override readonly name = 'CheckpointFormatError';
  readonly code = 'CHECKPOINT_FORMAT';
}

/** A file ended before the bytes its header promised. */
export class TruncatedFileError extends TesseraError {
  override readonly name = 'TruncatedFileError';
  readonly code = 'TRUNCATED_FILE';
  constructor(
    readonly file: string,
    readonly expectedBytes: number,
    readonly actualBytes: number,
    detail: string,
  ) {
    super(
      `${file} is truncated: its header needs ${expectedBytes} bytes but the file has ${actualBytes}` +
        `${detail ? ` (${detail})` : ''}; download it again.`,
    );
  }
}

/** A tensor the config requires is not in the checkpoint. */
export class MissingTensorError extends TesseraError {
  override readonly name = 'MissingTensorError';
  readonly code = 'MISSING_TENSOR';
  constructor(
    readonly tensor: string,
    readonly shape: readonly number[],
    where: string,
  ) {
    super(`tensor '${tensor}' (shape [${shape.join(', ')}]) is missing from ${where}; the checkpoint does not match its config.json.`);
  }
}

/** A checkpoint tensor's shape differs from the one its config.json implies. */
export class TensorShapeError extends TesseraError {
  override readonly name = 'TensorShapeError';
  readonly code = 'TENSOR_SHAPE';
  constructor(
    readonly tensor: string,
    readonly expected: readonly number[],
    readonly actual: readonly number[],
    file: string,
  ) {
    super(
      `tensor '${tensor}' in ${file} has shape [${actual.join(', ')}] but config.json implies [${expected.join(', ')}]; ` +
        'the checkpoint and its config do not match.',
    );
  }
}

/** A model file could not be fetched or read (network error, HTTP status, permission). */
export class ModelFileError extends TesseraError {
  override readonly name = 'ModelFileError';
  readonly code = 'MODEL_FILE';
}

/**
 * The CPU backend (onnxruntime) needs the checkpoint's ONNX graphs and they are not there. Lists every file
 * looked for, and how to get them.
 */
export class OnnxFilesMissingError extends TesseraError {
  override readonly name = 'OnnxFilesMissingError';
  readonly code = 'ONNX_FILES_MISSING';
  constructor(
    readonly where: string,
    readonly lookedFor: readonly string[],
    why: string,
  ) {
    super(
      `${why}, and ${where} has no ONNX graphs for the CPU backend (looked for ${lookedFor.join(', ')}). ` +
        'Use a checkpoint that ships them (the Hugging Face onnx-community exports do, in onnx/), export them ' +
        "with Hugging Face Optimum, or run where WebGPU is available (device: 'webgpu').",
    );
  }
}

/**
 * A checkpoint's ONNX graph lacks what the checkpoint's config needs the CPU backend to feed it (M-RoPE
 * positions, DeepStack rows): run as it is, it would answer differently from the model.
 */
export class OnnxGraphMismatchError extends TesseraError {
  override readonly name = 'OnnxGraphMismatchError';
  readonly code = 'ONNX_GRAPH_MISMATCH';
  constructor(
    readonly file: string,
    readonly needs: string,
    has: string,
  ) {
    super(
      `${file} ${has}, but this checkpoint's config needs the input ${needs}. Use an export whose graph takes ` +
        "it, or run on WebGPU (device: 'webgpu').",
    );
  }
}

/** A processor file (tokenizer.json, preprocessor_config.json, ...) is missing, malformed or inconsistent. */
export class ProcessorConfigError extends TesseraError {
  override readonly name = 'ProcessorConfigError';
  readonly code = 'PROCESSOR_CONFIG';
}

/** The checkpoint's chat template failed to render, or rendered something Tessera cannot map back to parts. */
export class ChatTemplateError extends TesseraError {
  override readonly name = 'ChatTemplateError';
  readonly code = 'CHAT_TEMPLATE';
}

/** A checkpoint tensor holds NaN or ±Infinity: the model would silently compute garbage (often token id 0). */
export class NonFiniteWeightError extends TesseraError {
  override readonly name = 'NonFiniteWeightError';
  readonly code = 'NON_FINITE_WEIGHT';
  constructor(
    readonly tensor: string,
    readonly file: string,
    readonly index: number,
    readonly value: number,
    readonly numNonFinite: number,
  ) {
    super(
      `tensor '${tensor}' in ${file} holds ${numNonFinite} non-finite values (the first, ${value}, at element ${index}); ` +
        'the checkpoint is corrupt or was saved after a diverged training step: download it again or use another revision.',
    );
  }
}

/**
 * An attention head size the kernels cannot run: head_dim must be a multiple of 4 (the kernels read vec4s)
 * and at most MAX_HEAD_DIM (the head lives in registers). Thrown while reading config.json and by the
 * attention kernels, before anything is uploaded.
 */
export class HeadDimError extends TesseraError {
  override readonly name = 'HeadDimError';
  readonly code = 'HEAD_DIM';
  constructor(
    readonly where: string,
    readonly headDim: number,
    readonly maxHeadDim: number,
  ) {
    const why =
      headDim > maxHeadDim
        ? `is above the largest supported head size, ${maxHeadDim}`
        : `is not a multiple of 4 (the attention kernels read heads as vec4s)`;
    super(`${where}: head_dim ${headDim} ${why}. Tessera runs head sizes 4, 8, ..., ${maxHeadDim}; this checkpoint cannot be loaded.`);
  }
}

/** A weight dtype Tessera does not know (createEngine({ dtype }), `tessera run --dtype`). */
export class UnknownDtypeError extends TesseraError {
  override readonly name = 'UnknownDtypeError';
  readonly code = 'UNKNOWN_DTYPE';
  constructor(
    readonly where: string,
    readonly value: unknown,
    readonly valid: readonly string[],
  ) {
    super(
      `${where}: unknown weight dtype ${JSON.stringify(value)}; use one of ${valid.join(', ')} ` +
        `(or per part, e.g. { vision: 'f16', text: 'q4' }).`,
    );
  }
}

/** A packed checkpoint (`tessera pack`) asked for in a dtype other than the one it holds. */
export class PackedDtypeError extends TesseraError {
  override readonly name = 'PackedDtypeError';
  readonly code = 'PACKED_DTYPE';
  constructor(
    readonly where: string,
    readonly asked: string,
    readonly packed: string,
  ) {
    super(
      `the checkpoint in ${where} is packed as ${packed} and holds no other weights, but ${asked} was asked for: load it ` +
        'without a dtype (or with its own), or pack the original checkpoint in the dtype you want.',
    );
  }
}

/**
 * A stored quantized copy of a checkpoint file that cannot be used (it does not match its source or the
 * requested dtype, or its bytes are damaged). Not thrown: reported once through console.warn, and the
 * copy is rebuilt from the source file.
 */
export class StoredWeightsMismatchError extends TesseraError {
  override readonly name = 'StoredWeightsMismatchError';
  readonly code = 'STORED_WEIGHTS_MISMATCH';
  constructor(
    readonly file: string,
    readonly reason: string,
  ) {
    super(`the stored quantized copy of ${file} was not used (${reason}); it is being rebuilt from the checkpoint file.`);
  }
}
