// Named errors. Every message says what happened, gives the numbers, and says what to do.
// Each class carries a stable `code` so callers (and errors crossing a worker boundary) can branch on it,
// and its name as a literal (`override readonly name = 'FooError'`), which survives minification.
//
// A hint names an option by where it is set: "the request option tessera.encodeTimeoutMs" (a field of
// chat.completions.create's request), "the engine option encoder.maxBatchTiles" (a field of createEngine's
// options). test/unit/error-hints.test.ts checks every such path against the public option types.

export abstract class TesseraError extends Error {
  /**
   * The class name as a literal. Minifiers rename classes (`new.target.name` would read `ne`), and an error
   * rebuilt after crossing a worker keeps only what it carried, so each class states its own name.
   */
  abstract override readonly name: string;
  abstract readonly code: string;
}

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
    super(
      `WGSL for '${label}' did not compile${detail ? ` (${detail})` : ''}:\n${lines.join('\n') || '  (no compiler messages)'}`,
    );
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
  ) {
    super(
      `${kernel}: needs ${limit} = ${requested} but this device allows ${allowed}; ` +
        'use a smaller batch or split the work.',
    );
  }
}

/** A shape or option the kernel does not implement (for example a head size other than its fixed one). */
export class UnsupportedShapeError extends TesseraError {
  override readonly name = 'UnsupportedShapeError';
  readonly code = 'UNSUPPORTED_SHAPE';
}

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

/** The KV cache has too few free blocks for a request (the numbers say how many it needs). */
export class KvCacheFullError extends TesseraError {
  override readonly name = 'KvCacheFullError';
  readonly code = 'KV_CACHE_FULL';
  constructor(
    readonly neededBlocks: number,
    readonly freeBlocks: number,
    readonly blockSize: number,
  ) {
    super(
      `the KV cache needs ${neededBlocks} more blocks of ${blockSize} tokens but only ${freeBlocks} are free; ` +
        'wait for other requests to finish, shorten the prompt, lower the request option max_tokens, or raise the ' +
        'engine option kvCacheTokens.',
    );
  }
}

/** A prompt (plus the tokens asked for) does not fit the model's context window. */
export class ContextLengthError extends TesseraError {
  override readonly name = 'ContextLengthError';
  readonly code = 'CONTEXT_LENGTH';
  /** The model's own limit (max_position_embeddings in config.json), when known. */
  readonly modelPositions?: number;
  /** The tokens the engine's KV cache may hold (the engine option kvCacheTokens), when known. */
  readonly kvCacheTokens?: number;
  constructor(
    readonly promptTokens: number,
    readonly maxNewTokens: number,
    readonly contextWindow: number,
    limits?: { modelPositions: number; kvCacheTokens: number },
  ) {
    const asked = `the prompt has ${promptTokens} tokens and ${maxNewTokens} more were asked for, but the context window is ${contextWindow} tokens`;
    const fixes = 'shorten the prompt, use a smaller image, or lower the request option max_tokens';
    let why = '';
    if (limits && limits.kvCacheTokens < limits.modelPositions) {
      why = ` (the engine option kvCacheTokens, ${limits.kvCacheTokens}, is below the model's limit of ${limits.modelPositions}: raise kvCacheTokens up to ${limits.modelPositions}, or ${fixes})`;
    } else if (limits) {
      why = ` (the model's limit, max_position_embeddings in its config.json: ${fixes})`;
    }
    super(`${asked}${why}${why ? '.' : `; ${fixes}.`}`);
    if (limits) {
      this.modelPositions = limits.modelPositions;
      this.kvCacheTokens = limits.kvCacheTokens;
    }
  }
}

/** The placeholder contract broke: a prompt's media placeholders and the embeddings given differ in count. */
export class ImageTokenMismatchError extends TesseraError {
  override readonly name = 'ImageTokenMismatchError';
  readonly code = 'IMAGE_TOKEN_MISMATCH';
  constructor(
    readonly numPlaceholders: number,
    readonly numEmbeddings: number,
  ) {
    super(
      `the prompt has ${numPlaceholders} image tokens but the encoder returned ${numEmbeddings} embeddings; ` +
        'every image part must be encoded with the same processor config the prompt was expanded with.',
    );
  }
}

/** The caller aborted the request (AbortSignal). */
export class RequestAbortedError extends TesseraError {
  override readonly name = 'RequestAbortedError';
  readonly code = 'ABORTED';
  constructor(reason?: unknown) {
    super(`the request was aborted${reason instanceof Error ? `: ${reason.message}` : reason ? `: ${String(reason)}` : ''}`);
  }
}

/** A broken internal invariant: a bug in Tessera, not in the caller's input. */
export class InternalError extends TesseraError {
  override readonly name = 'InternalError';
  readonly code = 'INTERNAL';
}

function fmt(v: readonly number[] | number): string {
  return typeof v === 'number' ? String(v) : `[${v.join(', ')}]`;
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

/** A chat message is not of the accepted shape (unknown role, unknown part type, missing image). */
export class InvalidMessageError extends TesseraError {
  override readonly name = 'InvalidMessageError';
  readonly code = 'INVALID_MESSAGE';
}

/** Bytes given as an image could not be decoded (not an image, truncated, or an unsupported format). */
export class ImageDecodeError extends TesseraError {
  override readonly name = 'ImageDecodeError';
  readonly code = 'IMAGE_DECODE';
}

/** An image has more pixels than the decoder accepts. */
export class ImageTooLargeError extends TesseraError {
  override readonly name = 'ImageTooLargeError';
  readonly code = 'IMAGE_TOO_LARGE';
  constructor(
    readonly width: number,
    readonly height: number,
    readonly maxPixels: number,
  ) {
    super(
      `image is ${width}x${height} = ${width * height} pixels but the decoder accepts at most ${maxPixels}; ` +
        'downscale it before sending it.',
    );
  }
}

/** The GPU ran out of memory while encoding media. */
export class EncoderOutOfMemoryError extends TesseraError {
  override readonly name = 'EncoderOutOfMemoryError';
  readonly code = 'ENCODER_OUT_OF_MEMORY';
  constructor(
    readonly numTiles: number,
    detail: string,
  ) {
    super(
      `the GPU ran out of memory encoding ${numTiles} image tiles (${detail}); send a smaller image, set the ` +
        'request option tessera.allowReducedResolution to retry once with fewer tiles, or lower the engine ' +
        'option encoder.maxBatchTiles.',
    );
  }
}

/** encode() was asked for media that was never prepared (or was already encoded or forgotten). */
export class MediaNotPreparedError extends TesseraError {
  override readonly name = 'MediaNotPreparedError';
  readonly code = 'MEDIA_NOT_PREPARED';
  constructor(readonly key: string) {
    super(`no prepared media with key ${key.slice(0, 16)}…; call prepare() with its bytes first`);
  }
}

/** An encoder worker crashed or was terminated while it held this request's media. */
export class EncoderWorkerCrashedError extends TesseraError {
  override readonly name = 'EncoderWorkerCrashedError';
  readonly code = 'ENCODER_WORKER_CRASHED';
  constructor(
    readonly workerIndex: number,
    detail: string,
  ) {
    super(`encoder worker ${workerIndex} stopped (${detail}); this request failed, the worker is being restarted — send the request again.`);
  }
}

/** Encoding one media item took longer than its timeout. */
export class EncodeTimeoutError extends TesseraError {
  override readonly name = 'EncodeTimeoutError';
  readonly code = 'ENCODE_TIMEOUT';
  constructor(readonly timeoutMs: number) {
    super(`encoding the image took longer than ${timeoutMs} ms; raise the request option tessera.encodeTimeoutMs or send a smaller image.`);
  }
}

/** The encoder cache cannot make room for an entry: too many of its bytes are referenced by running requests. */
export class EncoderCacheFullError extends TesseraError {
  override readonly name = 'EncoderCacheFullError';
  readonly code = 'ENCODER_CACHE_FULL';
  constructor(
    readonly sizeBytes: number,
    readonly capacityBytes: number,
    readonly referencedBytes: number,
    readonly freeableBytes: number,
  ) {
    super(
      `the encoder cache needs ${sizeBytes} bytes for one entry but only ${capacityBytes - referencedBytes} of its ` +
        `${capacityBytes} bytes can be made free (${referencedBytes} are referenced by running requests, ` +
        `${freeableBytes} of them freeable); wait for requests to finish, send fewer images at once, ` +
        'or raise the engine option encoder.memoryCacheBytes.',
    );
  }
}

/** A value given to a cache key (a config, an identity string) cannot be hashed canonically. */
export class CacheKeyError extends TesseraError {
  override readonly name = 'CacheKeyError';
  readonly code = 'CACHE_KEY';
}

/**
 * The persistent encoder cache (IndexedDB or a directory) failed and was switched off for this session.
 * Not thrown: handed to the cache's onWarning callback once; requests go on with the memory cache only.
 */
export class PersistentCacheUnavailableError extends TesseraError {
  override readonly name = 'PersistentCacheUnavailableError';
  readonly code = 'PERSISTENT_CACHE_UNAVAILABLE';
  constructor(
    readonly operation: string,
    readonly numEntries: number,
    readonly totalBytes: number,
    cause: unknown,
  ) {
    const why = cause instanceof Error ? `${cause.name}: ${cause.message}` : String(cause);
    super(
      `the persistent encoder cache failed during ${operation} (${why}) while holding ${numEntries} entries ` +
        `(${totalBytes} bytes); it is off until the page or process restarts, so encoded images are kept in ` +
        'memory only. Free disk space or site storage (or lower the engine option encoder.persistentCacheBytes) ' +
        'to keep them across reloads.',
      { cause },
    );
  }
}

/**
 * An encoder worker's script did not load (not found, served as something other than JavaScript, or it
 * threw while loading). Not retried: a restart would load the same script.
 */
export class EncoderWorkerLoadError extends TesseraError {
  override readonly name = 'EncoderWorkerLoadError';
  readonly code = 'ENCODER_WORKER_LOAD';
  constructor(
    readonly url: string,
    detail: string,
    hint: string,
  ) {
    super(`the encoder worker script ${url} did not load (${detail}); ${hint}`);
  }
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

/** A request could never fit the KV cache, even with every other request preempted. */
export class KvCacheTooSmallError extends TesseraError {
  override readonly name = 'KvCacheTooSmallError';
  readonly code = 'KV_CACHE_TOO_SMALL';
  constructor(
    readonly promptTokens: number,
    readonly maxNewTokens: number,
    readonly capacityTokens: number,
  ) {
    super(
      `the request needs up to ${promptTokens + maxNewTokens} tokens of KV cache (a ${promptTokens}-token prompt plus ` +
        `max_tokens ${maxNewTokens}) but the whole cache holds ${capacityTokens}; lower max_tokens, shorten the prompt ` +
        'or use a smaller image, or create the engine with a larger kvCacheTokens.',
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
        .join(', ')}; the requests in that step were failed and the engine goes on. This is a bug in Tessera: please report it with these numbers.`,
    );
  }
}

/** The model produced NaN or infinite logits for a request: its weights or config are broken. */
export class NonFiniteLogitsError extends TesseraError {
  override readonly name = 'NonFiniteLogitsError';
  readonly code = 'NON_FINITE_LOGITS';
  constructor(readonly step: number) {
    super(
      `the model's logits for output token ${step} hold NaN or infinity, so no token can be chosen; the checkpoint's ` +
        'weights or its config.json (rms_norm_eps, rope_theta, ...) are broken. Check the checkpoint, or load it again.',
    );
  }
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

/** The chat template ran past a bound (evaluation steps, time, output size, a range's length). */
export class ChatTemplateLimitError extends TesseraError {
  override readonly name = 'ChatTemplateLimitError';
  readonly code = 'CHAT_TEMPLATE_LIMIT';
  constructor(
    readonly limit: 'steps' | 'time' | 'output' | 'range' | 'recursion',
    readonly amount: number,
    readonly allowed: number,
  ) {
    super(
      `the chat template stopped: ${limit === 'recursion' ? 'it recursed until the JavaScript stack overflowed' : `its ${limit} reached ${amount} but the bound is ${allowed}`}; ` +
        "a template that loops or grows without end is refused. Use the checkpoint's own template, or fix the template file.",
    );
  }
}

/** A request field has a value Tessera cannot honour (sampling parameters, max_tokens, seed, options). */
export class InvalidRequestError extends TesseraError {
  override readonly name = 'InvalidRequestError';
  readonly code = 'INVALID_REQUEST';
  constructor(
    readonly field: string,
    readonly value: unknown,
    requirement: string,
  ) {
    super(`${field} is ${describeValue(value)}; ${requirement}`);
  }
}

/** A request has more image parts than the engine accepts (counted before any image is fetched or decoded). */
export class TooManyImagesError extends TesseraError {
  override readonly name = 'TooManyImagesError';
  readonly code = 'TOO_MANY_IMAGES';
  constructor(
    readonly numImages: number,
    readonly maxImages: number,
  ) {
    super(
      `the request has ${numImages} images but this engine accepts at most ${maxImages} per request; send fewer ` +
        'images, or create the engine with a larger media.maxImagesPerRequest.',
    );
  }
}

/** An image_url (or video_url) could not be fetched: network error, HTTP status, timeout, too many bytes, bad scheme. */
export class ImageFetchError extends TesseraError {
  override readonly name = 'ImageFetchError';
  readonly code = 'IMAGE_FETCH';
  constructor(
    readonly url: string,
    readonly reason: 'network' | 'status' | 'timeout' | 'too-large' | 'scheme' | 'redirect',
    detail: string,
    options?: { cause?: unknown },
    readonly media: 'image' | 'video' = 'image',
  ) {
    super(`could not fetch the ${media} at ${url}: ${detail}`, options);
  }
}

/** media.blockPrivateNetwork is on and an image_url (or a redirect) points at a private, loopback or link-local host. */
export class PrivateNetworkRefusedError extends TesseraError {
  override readonly name = 'PrivateNetworkRefusedError';
  readonly code = 'PRIVATE_NETWORK_REFUSED';
  constructor(
    readonly url: string,
    readonly address: string,
  ) {
    super(
      `refused to fetch ${url}: ${address} is a private, loopback or link-local address and media.blockPrivateNetwork ` +
        'is on; send the image bytes instead, or use a public URL.',
    );
  }
}

function describeValue(v: unknown): string {
  if (typeof v === 'number' || typeof v === 'boolean' || v === null || v === undefined) return String(v);
  if (typeof v === 'string') return JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v);
  return `a ${Array.isArray(v) ? 'array' : typeof v}`;
}

// ---- Video -------------------------------------------------------------------------------------

/** A video part was sent to a checkpoint without video settings (no `video_sampling`: not SmolVLM2). */
export class VideoNotSupportedError extends TesseraError {
  override readonly name = 'VideoNotSupportedError';
  readonly code = 'VIDEO_NOT_SUPPORTED';
  constructor(readonly where: string) {
    super(
      `the checkpoint at ${where} has no video settings (preprocessor_config.json has no "video_sampling"), so it ` +
        'cannot take video parts; use a SmolVLM2 checkpoint (model_type smolvlm, e.g. SmolVLM2-256M-Video-Instruct), or send frames as images.',
    );
  }
}

/** The bytes of a video part could not be read as a video (not a container Tessera reads, or cut short). */
export class VideoDecodeError extends TesseraError {
  override readonly name = 'VideoDecodeError';
  readonly code = 'VIDEO_DECODE';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** The clip has no video track (an audio-only file, for example). */
export class VideoTrackMissingError extends TesseraError {
  override readonly name = 'VideoTrackMissingError';
  readonly code = 'VIDEO_TRACK_MISSING';
  constructor(
    readonly numBytes: number,
    readonly tracks: string,
  ) {
    super(`the ${numBytes}-byte clip has no video track (its tracks: ${tracks || 'none'}); send a file with video in it.`);
  }
}

/** The clip's video codec cannot be decoded here (WebCodecs in this browser, or ffmpeg in Node). */
export class VideoCodecUnsupportedError extends TesseraError {
  override readonly name = 'VideoCodecUnsupportedError';
  readonly code = 'VIDEO_CODEC_UNSUPPORTED';
  constructor(
    readonly codec: string,
    readonly decoder: string,
  ) {
    super(
      `the clip's video codec '${codec}' cannot be decoded by ${decoder}; re-encode it as H.264 (MP4) or VP8/VP9 (WebM), ` +
        'or send the frames as a list of images with timestamps ({ frames: [{ image, timestamp }] }).',
    );
  }
}

/** The clip has no frames, or lasts 0 seconds: there is nothing to sample. */
export class VideoEmptyError extends TesseraError {
  override readonly name = 'VideoEmptyError';
  readonly code = 'VIDEO_EMPTY';
  constructor(
    readonly numFrames: number,
    readonly durationSeconds: number,
  ) {
    super(`the clip has ${numFrames} frames over ${durationSeconds} seconds, so no frame can be sampled; send a clip that lasts longer than 0 seconds.`);
  }
}

/** Node decodes MP4/WebM with an `ffmpeg` binary, and none was found. */
export class FfmpegMissingError extends TesseraError {
  override readonly name = 'FfmpegMissingError';
  readonly code = 'FFMPEG_MISSING';
  constructor(
    readonly command: string,
    detail: string,
  ) {
    super(
      `decoding MP4/WebM video in Node needs the ffmpeg program, and '${command}' could not be run (${detail}); install ` +
        'it (Debian/Ubuntu: apt-get install ffmpeg; macOS: brew install ffmpeg) or put it on PATH, or send the frames ' +
        'as a list of images with timestamps. Animated GIF and WebP need no ffmpeg.',
    );
  }
}

// ---- Shapes and weight dtypes ------------------------------------------------------------------

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

/** engine.profile() was called while requests are in flight: it times the GPU alone, between requests. */
export class EngineBusyError extends TesseraError {
  override readonly name = 'EngineBusyError';
  readonly code = 'ENGINE_BUSY';
  constructor(readonly numRequests: number) {
    super(
      `engine.profile() needs an idle engine, but ${numRequests} request(s) are in flight; call it once they have ` +
        'finished (requests that arrive during a profile wait for it).',
    );
  }
}
