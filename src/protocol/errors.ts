// Errors crossing a worker boundary keep their class: Tessera's named errors are sent as
// {code, name, message, stack, fields} and rebuilt on the other side as instances of the class their stable
// `code` names, so callers can still `instanceof ImageDecodeError` and policies that branch on a class
// (allowReducedResolution on EncoderOutOfMemoryError) work in worker mode. The code, not the name, picks
// the class: a bundler may rename classes (the built worker's ImageDecodeError is `class extends ...`
// bound to a one-letter name), while codes are string literals. Anything else arrives as a plain Error
// with its name.

import * as Comlink from 'comlink';
import * as errors from '../errors';

interface WireError {
  /** TesseraError.code, when the thrown value had one. */
  code?: string;
  name: string;
  message: string;
  stack?: string;
  fields: Record<string, unknown>;
}

type ErrorExports = typeof errors;
/** Every concrete error class exported by src/errors/ (the abstract base is left out). */
type ErrorClass = {
  [K in keyof ErrorExports]: ErrorExports[K] extends new (...args: never[]) => errors.TesseraError ? ErrorExports[K] : never;
}[keyof ErrorExports];
/** Every code a Tessera error class carries. */
export type ErrorCode = InstanceType<ErrorClass>['code'];

/**
 * Class by code. The type requires every code of every exported class, each mapped to the class whose
 * instances carry it: a new class in src/errors/ fails the type check until it is listed here.
 */
const CLASS_BY_CODE: { [C in ErrorCode]: abstract new (...args: never[]) => Extract<InstanceType<ErrorClass>, { code: C }> } = {
  WEBGPU_UNAVAILABLE: errors.WebGpuUnavailableError,
  DEVICE_LOST: errors.DeviceLostError,
  SHADER_COMPILE: errors.ShaderCompileError,
  GPU_VALIDATION: errors.GpuValidationError,
  SHAPE_MISMATCH: errors.ShapeMismatchError,
  BUFFER_SIZE: errors.BufferSizeError,
  DTYPE_MISMATCH: errors.DtypeMismatchError,
  DEVICE_LIMIT: errors.DeviceLimitError,
  UNSUPPORTED_SHAPE: errors.UnsupportedShapeError,
  MODEL_CONFIG: errors.ModelConfigError,
  UNSUPPORTED_MODEL: errors.UnsupportedModelError,
  CHECKPOINT_FORMAT: errors.CheckpointFormatError,
  TRUNCATED_FILE: errors.TruncatedFileError,
  MISSING_TENSOR: errors.MissingTensorError,
  TENSOR_SHAPE: errors.TensorShapeError,
  MODEL_FILE: errors.ModelFileError,
  ONNX_FILES_MISSING: errors.OnnxFilesMissingError,
  ONNX_GRAPH_MISMATCH: errors.OnnxGraphMismatchError,
  BACKEND_UNSUPPORTED: errors.BackendUnsupportedError,
  ONNXRUNTIME_LOAD: errors.OnnxRuntimeLoadError,
  KV_CACHE_FULL: errors.KvCacheFullError,
  CONTEXT_LENGTH: errors.ContextLengthError,
  IMAGE_TOKEN_MISMATCH: errors.ImageTokenMismatchError,
  ABORTED: errors.RequestAbortedError,
  INTERNAL: errors.InternalError,
  ENGINE_STALLED: errors.EngineStalledError,
  PROCESSOR_CONFIG: errors.ProcessorConfigError,
  CHAT_TEMPLATE: errors.ChatTemplateError,
  INVALID_MESSAGE: errors.InvalidMessageError,
  IMAGE_DECODE: errors.ImageDecodeError,
  IMAGE_TOO_LARGE: errors.ImageTooLargeError,
  ENCODER_OUT_OF_MEMORY: errors.EncoderOutOfMemoryError,
  MEDIA_NOT_PREPARED: errors.MediaNotPreparedError,
  ENCODER_WORKER_CRASHED: errors.EncoderWorkerCrashedError,
  ENCODE_TIMEOUT: errors.EncodeTimeoutError,
  ENCODER_CACHE_FULL: errors.EncoderCacheFullError,
  CACHE_KEY: errors.CacheKeyError,
  PERSISTENT_CACHE_UNAVAILABLE: errors.PersistentCacheUnavailableError,
  ENCODER_WORKER_LOAD: errors.EncoderWorkerLoadError,
  MISSING_DEPENDENCY: errors.MissingDependencyError,
  KV_CACHE_TOO_SMALL: errors.KvCacheTooSmallError,
  GPU_BOUNDS: errors.GpuBoundsError,
  NON_FINITE_LOGITS: errors.NonFiniteLogitsError,
  NON_FINITE_WEIGHT: errors.NonFiniteWeightError,
  CHAT_TEMPLATE_LIMIT: errors.ChatTemplateLimitError,
  INVALID_REQUEST: errors.InvalidRequestError,
  TOO_MANY_IMAGES: errors.TooManyImagesError,
  IMAGE_FETCH: errors.ImageFetchError,
  PRIVATE_NETWORK_REFUSED: errors.PrivateNetworkRefusedError,
  VIDEO_NOT_SUPPORTED: errors.VideoNotSupportedError,
  VIDEO_DECODE: errors.VideoDecodeError,
  VIDEO_TRACK_MISSING: errors.VideoTrackMissingError,
  VIDEO_CODEC_UNSUPPORTED: errors.VideoCodecUnsupportedError,
  VIDEO_EMPTY: errors.VideoEmptyError,
  FFMPEG_MISSING: errors.FfmpegMissingError,
  AUDIO_DECODE: errors.AudioDecodeError,
  AUDIO_NOT_SUPPORTED: errors.AudioNotSupportedError,
  TOOLS_NOT_SUPPORTED: errors.ToolsNotSupportedError,
  IMAGE_NOT_SUPPORTED: errors.ImageNotSupportedError,
  AUDIO_TOO_LONG: errors.AudioTooLongError,
  HEAD_DIM: errors.HeadDimError,
  UNKNOWN_DTYPE: errors.UnknownDtypeError,
  PACKED_DTYPE: errors.PackedDtypeError,
  STORED_WEIGHTS_MISMATCH: errors.StoredWeightsMismatchError,
  STORAGE_QUOTA: errors.StorageQuotaError,
  ENGINE_BUSY: errors.EngineBusyError,
  GRAMMAR_LOAD: errors.GrammarLoadError,
  UNSUPPORTED_SCHEMA: errors.UnsupportedSchemaError,
  SCHEMA_COMPILE: errors.SchemaCompileError,
  UNAUTHORIZED: errors.UnauthorizedError,
  MODEL_NOT_FOUND: errors.ModelNotFoundError,
  ROUTE_NOT_FOUND: errors.RouteNotFoundError,
  BODY_TOO_LARGE: errors.BodyTooLargeError,
  MALFORMED_BODY: errors.MalformedBodyError,
  UNSUPPORTED_CONTENT_TYPE: errors.UnsupportedContentTypeError,
  QUEUE_FULL: errors.ServerQueueFullError,
  ENGINE_UNAVAILABLE: errors.EngineUnavailableError,
  EMBEDDINGS_NOT_ACCEPTED: errors.EmbeddingsNotAcceptedError,
  EMBEDDINGS_NOT_CACHED: errors.EmbeddingsNotCachedError,
  EMBEDDINGS_SHAPE: errors.EmbeddingsShapeError,
  REMOTE_SERVER: errors.RemoteServerError,
  REMOTE_UNREACHABLE: errors.RemoteUnreachableError,
  REMOTE_MODEL_MISMATCH: errors.RemoteModelMismatchError,
};

/** The class a wire error's code names (undefined for codes this side does not know: a newer worker). */
export function errorClassForCode(code: string | undefined): (abstract new (...args: never[]) => errors.TesseraError) | undefined {
  return code !== undefined && Object.hasOwn(CLASS_BY_CODE, code) ? CLASS_BY_CODE[code as ErrorCode] : undefined;
}

export function toWireError(e: unknown): WireError {
  if (e instanceof Error) {
    const fields: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(e)) {
      if (v === null || ['string', 'number', 'boolean'].includes(typeof v) || Array.isArray(v)) fields[k] = v;
    }
    const code = e instanceof errors.TesseraError ? e.code : undefined;
    return { code, name: e.name, message: e.message, stack: e.stack, fields };
  }
  return { name: 'Error', message: String(e), fields: {} };
}

export function fromWireError(w: WireError): Error {
  const cls = errorClassForCode(w.code);
  let err: Error;
  let name = w.name;
  if (cls) {
    err = Object.create(cls.prototype) as Error;
    Object.defineProperty(err, 'message', { value: w.message, writable: true, configurable: true });
    // A minified sender names its classes with one letter; then this side's class name is the better one.
    if (!/Error$/.test(name)) name = cls.name;
  } else {
    err = new Error(w.message);
  }
  Object.assign(err, w.fields);
  Object.defineProperty(err, 'name', { value: name, writable: true, configurable: true, enumerable: true });
  if (w.stack) Object.defineProperty(err, 'stack', { value: w.stack, writable: true, configurable: true });
  return err;
}

/** Make comlink send thrown errors with their class (call in the worker and on the main thread). */
export function installErrorTransfer(): void {
  const base = Comlink.transferHandlers.get('throw');
  if (!base) return;
  Comlink.transferHandlers.set('throw', {
    // comlink's own test for "this is a thrown value" (its marker symbol is private)
    canHandle: base.canHandle as (value: unknown) => value is { value: unknown },
    serialize: ({ value }: { value: unknown }) => [toWireError(value), []],
    deserialize: (w: WireError) => {
      throw fromWireError(w);
    },
  } as Comlink.TransferHandler<{ value: unknown }, WireError>);
}
