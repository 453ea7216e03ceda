// Errors of one request: invalid fields or messages, the context window, the KV cache, cancellation, the
// placeholder contract, non-finite logits, a busy engine.

import { TesseraError } from './base';

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

/** A chat message is not of the accepted shape (unknown role, unknown part type, missing image). */
export class InvalidMessageError extends TesseraError {
  override readonly name = 'InvalidMessageError';
  readonly code = 'INVALID_MESSAGE';
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

function describeValue(v: unknown): string {
  if (typeof v === 'number' || typeof v === 'boolean' || v === null || v === undefined) return String(v);
  if (typeof v === 'string') return JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v);
  return `a ${Array.isArray(v) ? 'array' : typeof v}`;
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

/** An image_embeds part reached an engine that does not take precomputed embeddings (the default). */
export class EmbeddingsNotAcceptedError extends TesseraError {
  override readonly name = 'EmbeddingsNotAcceptedError';
  readonly code = 'EMBEDDINGS_NOT_ACCEPTED';
  constructor(readonly where: string) {
    super(
      `${where} is an image_embeds part, but this engine does not take precomputed embeddings; send the image itself ` +
        '(image_url), or create the engine with media.acceptEmbeddings: true (tessera serve --enable-mm-embeds) if its clients are trusted.',
    );
  }
}

/** An image_embeds part names (uuid) embeddings the engine does not hold, and does not carry them. */
export class EmbeddingsNotCachedError extends TesseraError {
  override readonly name = 'EmbeddingsNotCachedError';
  readonly code = 'EMBEDDINGS_NOT_CACHED';
  constructor(
    readonly where: string,
    readonly uuid: string,
  ) {
    super(
      `${where} names the embeddings ${JSON.stringify(uuid)} without sending them, and they are not cached here (evicted, or never sent); send the part again with its image_embeds.`,
    );
  }
}

/** Precomputed embeddings whose shape does not fit this model (another checkpoint, or another tile grid). */
export class EmbeddingsShapeError extends TesseraError {
  override readonly name = 'EmbeddingsShapeError';
  readonly code = 'EMBEDDINGS_SHAPE';
  constructor(
    readonly where: string,
    readonly shape: readonly number[],
    readonly expected: string,
    /** What else the part must say (Idefics3: its tile grid; Qwen-VL: its patch grid). */
    grid = 'send its tile grid as tessera.grid',
  ) {
    super(
      `${where} carries embeddings of shape [${shape.join(', ')}] but this model takes ${expected}; compute them with the same checkpoint (its vision tower and connector) and ${grid}.`,
    );
  }
}

/**
 * A request offered tools (or sent tool calls or tool results) to a checkpoint whose chat template has no
 * way to show them: the template must offer tools and say how a call is written.
 */
export class ToolsNotSupportedError extends TesseraError {
  override readonly name = 'ToolsNotSupportedError';
  readonly code = 'TOOLS_NOT_SUPPORTED';
  constructor(
    readonly where: string,
    readonly field: string,
  ) {
    super(
      `${field} needs tool calling, but the chat template of the checkpoint at ${where} does not offer tools ` +
        '(it never reads `tools` or has no <tool_call> syntax); use a checkpoint whose template does (Qwen3-VL), ' +
        'or leave tools, tool_choice, tool messages and tool_calls out.',
    );
  }
}
