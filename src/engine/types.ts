// The engine's public request and response shapes: OpenAI's chat completions, so that a request typed
// with the `openai` package's ChatCompletionCreateParams is a ChatCompletionRequest, and a ChatCompletion or
// ChatCompletionChunk from the engine is the `openai` package's (checked by the consumer test against it).
// Fields OpenAI has that Tessera cannot honour are typed here and refused at run time by name
// (intake/validate-request.ts); Tessera's own fields are under `tessera` (and `top_k`, as vLLM's server).

import type { KernelVariant } from '../gpu/adapter-info';
import type { TimingMethod } from '../model/runner/model-runner';
import type { RawImage } from '../processor/image-decode';
import type { FrameThumbnail } from '../processor/video-frames';
import type { AudioMetaInfo, VideoMetaInfo } from '../protocol/encoder';

export type { AudioMetaInfo, VideoMetaInfo };

/** Text (what system, developer and tool messages take). */
export interface ChatTextPart {
  type: 'text';
  text: string;
}

/** An earlier assistant turn's refusal (OpenAI's): read as that turn's text. */
export interface ChatRefusalPart {
  type: 'refusal';
  refusal: string;
}

export type ChatContentPart =
  | ChatTextPart
  /**
   * url: a data: URL, an http(s) URL, or a blob: URL (browser). detail: 'auto' and 'high' read the image at
   * the checkpoint's resolution; other values ('low', 'original') are refused (not implemented).
   */
  | { type: 'image_url'; image_url: { url: string; detail?: string } }
  /** Encoded image bytes (PNG, JPEG, WebP, ...). */
  | { type: 'image'; image: Uint8Array | ArrayBuffer | Blob }
  /**
   * A video, for SmolVLM2 checkpoints: MP4 (H.264), WebM (VP8/VP9), MKV or MOV bytes, a Blob or File (read
   * lazily: only the sampled frames are decoded), an animated GIF/WebP (Node), or frames already chosen.
   */
  | { type: 'video'; video: Uint8Array | ArrayBuffer | Blob | VideoFrames }
  /** url: a data: URL, an http(s) URL, or a blob: URL (browser). The part vLLM's OpenAI server takes. */
  | { type: 'video_url'; video_url: { url: string } }
  /** Audio, for Voxtral checkpoints, as OpenAI's chat completions take it: the file as base64. */
  | { type: 'input_audio'; input_audio: { data: string; format: 'wav' | 'mp3' | 'flac' | 'ogg' | 'opus' | 'm4a' | 'aac' | 'webm' | 'mp4' } }
  /**
   * Audio, for Voxtral checkpoints: a file's bytes, a Blob or File (WAV, MP3, Ogg/Opus, FLAC, AAC/M4A, WebM,
   * or a video file's first audio track), or samples already decoded (mono, or channels interleaved).
   */
  | { type: 'audio'; audio: Uint8Array | ArrayBuffer | Blob | AudioSamples }
  /** url: a data: URL, an http(s) URL, or a blob: URL (browser). The part vLLM's OpenAI server takes. */
  | { type: 'audio_url'; audio_url: { url: string } }
  /**
   * Image embeddings computed elsewhere (vLLM's `image_embeds` part), for an engine created with
   * media.acceptEmbeddings (tessera serve --enable-mm-embeds): base64 of `torch.save(tensor)` of shape
   * [tiles, imageSeqLen, hidden] or [tiles * imageSeqLen, hidden] (f32, f16 or bf16), or the tensor itself.
   * `uuid` names them in the encoder cache (a later part with `image_embeds: null` and the same uuid uses
   * them again); `tessera.grid` is the image's tile grid [rows, cols] ([0, 0] or absent: one tile, not split).
   * A Qwen-VL image's go as vLLM's dictionary `{ image_embeds, image_grid_thw }`: rows of shape
   * [tokens, hidden · (1 + DeepStack levels)] and the patch grid [t, h, w] (a tensor of shape [1, 3], base64 of
   * `torch.save`, or an array); a part naming them by uuid alone carries the grid as `tessera.grid_thw`.
   */
  | {
      type: 'image_embeds';
      image_embeds:
        | string
        | { data: Float32Array; shape: number[] }
        | {
            image_embeds: string | { data: Float32Array; shape: number[] };
            image_grid_thw: string | [number, number, number] | [[number, number, number]];
          }
        | null;
      uuid?: string | null;
      tessera?: { grid?: [number, number]; grid_thw?: [number, number, number] };
    }
  /** OpenAI's file part (PDFs and the like): refused (InvalidMessageError). */
  | { type: 'file'; file: unknown };

/** Decoded audio: samples in [-1, 1] at their own rate, channels interleaved (default 1: mono). */
export interface AudioSamples {
  pcm: Float32Array;
  sampleRate: number;
  channels?: number;
}

/** A video for engine.videoFrames(): what a `video` part takes, or a URL as a `video_url` part does. */
export type ChatVideoInput = Uint8Array | ArrayBuffer | Blob | VideoFrames | string;

/** A video as frames with their times (used as given: none are dropped or added). */
export interface VideoFrames {
  frames: Array<{ image: Uint8Array | ArrayBuffer | Blob | RawImage; timestamp: number }>;
  /** Seconds (default: the last timestamp plus the spacing of the last two frames). */
  duration?: number;
}

/**
 * A chat message: every variant of OpenAI's ChatCompletionMessageParam is one. 'developer' is read as
 * 'system'. An assistant turn may have no content (null or absent: empty) and refusal parts or `refusal`
 * (read as its text), and `tool_calls`; a 'tool' turn is a call's result (`tool_call_id`, content). Tool
 * turns and calls need a checkpoint whose chat template offers tools (ToolsNotSupportedError otherwise).
 * Refused by name (InvalidRequestError): `name`, `function_call`, `audio`, and the 'function' role.
 */
export interface ChatCompletionMessage {
  role: 'system' | 'developer' | 'user' | 'assistant' | 'tool' | 'function';
  /** Required but for an assistant turn. */
  content?: string | Array<ChatContentPart | ChatRefusalPart> | null;
  refusal?: string | null;
  name?: string;
  /** An assistant turn's calls; OpenAI's custom-tool calls are typed for the openai client and refused. */
  tool_calls?: Array<ToolCall | CustomToolCallParam>;
  function_call?: unknown;
  audio?: unknown;
  tool_call_id?: string;
}

/**
 * OpenAI's response_format. 'json_object': the answer is one JSON object; 'json_schema': one JSON value
 * valid against `json_schema.schema`. Both by constrained decoding (each token is chosen among those that
 * keep the answer valid), so the answer always parses; a schema keyword the grammar cannot enforce is
 * refused (UnsupportedSchemaError) rather than ignored.
 */
export type ResponseFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | { type: 'json_schema'; json_schema: { name: string; description?: string; schema?: Record<string, unknown>; strict?: boolean | null } };

/** One token's log probability (OpenAI's ChatCompletionTokenLogprob). */
export interface TokenLogprob {
  /** The token's text (U+FFFD where it is part of a character: `bytes` has the exact bytes). */
  token: string;
  /** The token's UTF-8 bytes (null for a token that has none, such as a special token). */
  bytes: number[] | null;
  logprob: number;
  /** The most likely tokens at this position (top_logprobs of them), most likely first. */
  top_logprobs: Array<{ token: string; bytes: number[] | null; logprob: number }>;
}

/** A choice's log probabilities (with logprobs: true), or null. */
export type ChoiceLogprobs = { content: TokenLogprob[] | null; refusal: TokenLogprob[] | null } | null;

export interface ChatCompletionRequest {
  messages: ChatCompletionMessage[];
  /** Accepted and not checked: the engine answers with its one model, and the response names it. */
  model?: string;
  stream?: boolean | null;
  /** include_usage: the stream's last chunk has no choices and the request's usage (every other chunk usage null). */
  stream_options?: { include_usage?: boolean; include_obfuscation?: boolean } | null;
  /** Most tokens to generate (default 128); the same as max_completion_tokens (give one, or both equal). */
  max_tokens?: number | null;
  max_completion_tokens?: number | null;
  /** 0 or unset: greedy. */
  temperature?: number | null;
  top_p?: number | null;
  /** vLLM's extension: keep the k most likely tokens (0 or unset: all). */
  top_k?: number;
  /** Sampling seed (default 0): the same seed gives the same tokens. */
  seed?: number | null;
  /**
   * Up to 4 strings: the answer ends before the first place one of them appears (matched across token
   * boundaries, not included in the text); finish_reason 'stop'.
   */
  stop?: string | string[] | null;
  /**
   * Answers to generate, 1 to 16 (default 1). Choice i samples with seed + i; the choices after the first
   * share the prompt's KV blocks (one prefill) and the image embeddings.
   */
  n?: number | null;
  /**
   * -2 to 2 (default 0): subtracted from a token's logit once per time it was already generated (frequency)
   * or once if it was at all (presence), before temperature, as OpenAI defines them.
   */
  frequency_penalty?: number | null;
  presence_penalty?: number | null;
  /** true: each choice has the log probability of each of its tokens (choices[].logprobs.content). */
  logprobs?: boolean | null;
  /** 0 to 20, with logprobs: true: also that many most likely tokens at each position. */
  top_logprobs?: number | null;
  response_format?: ResponseFormat;
  /** Accepted; they do not change the answer (identifiers, storage and tier hints of OpenAI's service). */
  user?: string;
  safety_identifier?: string | null;
  metadata?: Record<string, string> | null;
  store?: boolean | null;
  service_tier?: string | null;
  prompt_cache_key?: string | null;
  prompt_cache_retention?: string | null;
  /**
   * Functions the model may call, for a checkpoint whose chat template offers tools (Qwen3-VL's; others:
   * ToolsNotSupportedError). The template shows them to the model; a call is constrained to the tool's
   * `parameters` schema, so it always parses. Up to 128.
   */
  tools?: Array<ChatCompletionTool | CustomToolParam>;
  /**
   * 'auto' (default with tools): the model answers or calls; 'none': it answers (no call is read);
   * 'required': it calls one or more tools and writes nothing else; { type: 'function', function: { name } }:
   * it calls that one. OpenAI's allowed_tools and custom choices are typed for the openai client and refused.
   */
  tool_choice?:
    | 'auto'
    | 'none'
    | 'required'
    | { type: 'function'; function: { name: string } }
    | { type: 'allowed_tools'; allowed_tools: unknown }
    | { type: 'custom'; custom: { name: string } };
  /** false: at most one call per answer (default true). */
  parallel_tool_calls?: boolean;
  /**
   * OpenAI's, refused unless absent, null or empty (InvalidRequestError names the field): the deprecated
   * functions, logit_bias, audio output, predicted outputs, web search, reasoning and moderation options.
   */
  functions?: unknown[];
  function_call?: unknown;
  logit_bias?: Record<string, number> | null;
  audio?: unknown;
  modalities?: Array<'text' | 'audio'> | null;
  prediction?: unknown;
  web_search_options?: unknown;
  reasoning_effort?: string | null;
  verbosity?: string | null;
  moderation?: unknown;
  /** Cancels the request (also given as create()'s second argument, as the openai client takes it). */
  signal?: AbortSignal;
  /** Tessera's own options (not OpenAI's). */
  tessera?: {
    /** Fail an image whose encode takes longer than this (ms). */
    encodeTimeoutMs?: number;
    /** If the GPU runs out of memory encoding an image, retry once at a lower resolution (fewer tiles). */
    allowReducedResolution?: boolean;
    /** If an image cannot be encoded, answer without it (the response is flagged `degraded: 'text-only'`). */
    textOnlyFallback?: boolean;
    /**
     * Video token pruning (EVS, as vLLM's video_pruning_rate): drop this share, in [0, 1), of each video's
     * frame tokens, keeping the first frame whole and, after it, the tokens that changed most since the
     * previous frame. 0 or unset: no pruning.
     */
    videoPruning?: number;
    /** Return a thumbnail of every sampled video frame, this many px on its longest side, in tessera.videos. */
    videoThumbnails?: number;
    /**
     * Ask an audio checkpoint for a transcription of the request's one audio part (Voxtral's transcription
     * prompt), in `language` (ISO 639-1, e.g. 'en') or the one it hears when absent. The messages must hold
     * exactly one audio part and no text. engine.audio.transcriptions.create() sets it.
     */
    transcription?: { language?: string };
  };
}

/**
 * 'stop': a stop token or a `stop` string; 'length': max_tokens or the context window; 'tool_calls': the
 * answer ended with one or more tool calls. A cancelled request has none: a stream ends (as the openai
 * client's does), a non-streamed request rejects with RequestAbortedError.
 */
export type FinishReason = 'stop' | 'length' | 'tool_calls';

/** A function offered to the model (OpenAI's ChatCompletionTool). */
export interface ChatCompletionTool {
  type: 'function';
  function: {
    /** 1 to 64 letters, digits, underscores or dashes. */
    name: string;
    description?: string;
    /** A JSON Schema object; absent: the function takes no arguments ({}). */
    parameters?: Record<string, unknown>;
    /** Accepted: every call is constrained to the schema whatever it says. */
    strict?: boolean | null;
  };
}

/** OpenAI's custom (free-form text) tool: typed so the openai client's requests type-check; refused by name. */
export interface CustomToolParam {
  type: 'custom';
  custom: { name: string; description?: string; format?: unknown };
}

/** A call of a custom tool, as OpenAI types it: refused by name. */
export interface CustomToolCallParam {
  id: string;
  type: 'custom';
  custom: { name: string; input: string };
}

/** A call the model made (OpenAI's ChatCompletionMessageToolCall): `arguments` is JSON text valid against the tool's schema. */
export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/** A streamed call: sent whole, in one chunk, once the model closed it. */
export interface ToolCallDelta extends ToolCall {
  /** The call's position among this choice's calls. */
  index: number;
}

export interface RequestTimings {
  /** Decode + resize + tokenize on the CPU. */
  processMs: number;
  /** Vision tower + connector. */
  encodeMs: number;
  prefillMs: number;
  /** Request start to the first token. */
  ttftMs: number;
  decodeMs: number;
  /** Generated tokens after the first per second of decode. */
  decodeTokensPerSecond: number;
  numPrefillChunks: number;
  /** Each decode step's wall time (inter-token latency). */
  decodeStepMs: number[];
  /** performance.now() at the end of each decode step. */
  decodeStepEnd: number[];
}

export interface MediaInfo {
  /** Content key (blake3 of model identity, processing config and the image bytes). */
  key: string;
  /**
   * Where the embeddings came from ('given': an image_embeds part carried them; 'prefix-cache': none were
   * needed, the prefix cache held the KV of all of the item's tokens).
   */
  source: 'memory' | 'inflight' | 'persistent' | 'encoded' | 'given' | 'prefix-cache';
  numTiles: number;
  /** A Qwen-VL image's patch grid (frames, rows, columns of patches) after the smart resize. */
  grid?: { t: number; h: number; w: number };
  /** size.longest_edge used (lower than the config's after a reduced-resolution retry); a Qwen-VL image's resized longest side. */
  longestEdge: number;
  /** Set for a video's item: which video part, and which sampled frame (absent: the whole pruned video). */
  video?: { videoIndex: number; frame?: number };
  /** Set for an audio chunk: which audio part, and which 30-second chunk of it. */
  audio?: { audioIndex: number; chunk: number };
}

/** engine.imageEmbeddings(): what an image part splices, and the facts an image_embeds part carries. */
export interface ImageEmbeddingsResult {
  /** The encoder cache's content key (blake3 of the encoder identity, processing config and bytes). */
  key: string;
  /** The tile grid [rows, cols] ([0, 0]: one tile, not split): an image_embeds part's tessera.grid. [0, 0] for a Qwen-VL image. */
  grid: [number, number];
  /** A Qwen-VL image's patch grid [t, h, w] (before the merge): an image_embeds part's image_grid_thw. */
  gridThw?: [number, number, number];
  /**
   * Idefics3: [tiles, imageSeqLen, hidden]. Qwen-VL: [tokens, hidden · (1 + DeepStack levels)], vLLM's
   * layout (each row followed by its Qwen3-VL DeepStack levels' rows).
   */
  shape: number[];
  /** Row-major values, shared with the encoder cache: never modify them. */
  data: Float32Array;
  source: MediaInfo['source'];
}

/** What an audio part became: how it was read, and its 30-second chunks (each cached on its own). */
export interface AudioInfo extends AudioMetaInfo {
  chunks: Array<{ key: string; source: MediaInfo['source']; start: number }>;
  /** [AUDIO] tokens in the prompt. */
  tokens: number;
  /** Decoding (with resampling) and log-mel time in the encoder. */
  decodeMs: number;
  featuresMs: number;
}

/** A sampled frame of a video: where it is in the clip, and its thumbnail when asked for. */
export interface VideoFrameInfo {
  /** Frame index in the clip (position in a frame list). */
  index: number;
  /** Seconds, and as the prompt prints it ("MM:SS"). */
  timestamp: number;
  label: string;
  /** Cache key of the frame's embeddings (blake3 of its pixels and the encoder). */
  key: string;
  /** Present with the request option tessera.videoThumbnails (or the thumbnailEdge of engine.videoFrames()). */
  thumbnail?: FrameThumbnail;
}

/** What a video part became: the clip's facts (VideoMetaInfo), the sampled frames, and its tokens. */
export interface VideoInfo extends VideoMetaInfo {
  /** Whole-clip key (bytes + sampling config); absent for a frame list. */
  clipKey?: string;
  /** 'decoded' (demuxed and decoded now) or 'clip-cache' (seen before: nothing decoded). */
  source: 'decoded' | 'clip-cache';
  frames: VideoFrameInfo[];
  /** Frame tokens in the prompt, and without pruning (equal unless tessera.videoPruning is set). */
  tokens: number;
  unprunedTokens: number;
}

export interface TesseraInfo {
  tokenIds: number[];
  promptTokens: number;
  imageTokens: number;
  numTiles: number;
  /** Prompt tokens whose KV came from the prefix cache (not computed again). */
  cachedTokens: number;
  timings: RequestTimings;
  media: MediaInfo[];
  /** One per video part, in message order (empty without videos). */
  videos: VideoInfo[];
  /** One per audio part, in message order (empty without audio). */
  audios: AudioInfo[];
  /** Set when the images could not be used and the caller allowed an answer without them. */
  degraded?: 'text-only';
  /** With n > 1 (non-streamed): every choice's, in index order (this object is choice 0's). */
  choices?: TesseraInfo[];
}

export interface CompletionUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

export interface ChatCompletion {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  choices: Array<{
    index: number;
    /** content: '' when the answer is tool calls only; tool_calls: present when it made any. */
    message: { role: 'assistant'; content: string; refusal: null; tool_calls?: ToolCall[] };
    finish_reason: FinishReason;
    /** null unless the request asked for logprobs. */
    logprobs: ChoiceLogprobs;
  }>;
  usage: CompletionUsage;
  tessera: TesseraInfo;
}

export interface ChatCompletionChunk {
  id: string;
  object: 'chat.completion.chunk';
  created: number;
  model: string;
  /** One choice; none on the usage chunk that ends a stream with stream_options.include_usage. */
  choices: Array<{
    index: number;
    delta: { role?: 'assistant'; content?: string; tool_calls?: ToolCallDelta[] };
    finish_reason: FinishReason | null;
    /** With logprobs: true, those of the tokens this chunk completes. */
    logprobs?: ChoiceLogprobs;
  }>;
  /** With stream_options.include_usage: null on every chunk but the last, which has the usage. */
  usage?: CompletionUsage | null;
  /** On the chunk with the finish reason only. */
  tessera?: TesseraInfo;
}

/** create()'s second argument, as the openai client's request options (only the signal is read). */
export interface ChatRequestOptions {
  signal?: AbortSignal;
}

/** chat.completions.create's overloads (the engine's and the remote engine's): a stream for stream: true. */
export interface ChatCompletionsCreate {
  (req: ChatCompletionRequest & { stream: true }, options?: ChatRequestOptions): Promise<AsyncIterable<ChatCompletionChunk>>;
  (req: ChatCompletionRequest & { stream?: false | null }, options?: ChatRequestOptions): Promise<ChatCompletion>;
  (req: ChatCompletionRequest, options?: ChatRequestOptions): Promise<ChatCompletion | AsyncIterable<ChatCompletionChunk>>;
}

/**
 * A transcription (OpenAI's audio.transcriptions.create; Voxtral's transcription prompt) of one audio file
 * by an audio checkpoint.
 */
export interface TranscriptionRequest {
  /** The audio: a file's bytes, a Blob or File, or decoded samples. */
  file: Uint8Array | ArrayBuffer | Blob | AudioSamples;
  /** ISO 639-1 code of the spoken language ('en', 'fr', ...); absent: the model tells it itself. */
  language?: string;
  stream?: boolean;
  /** Most tokens of text (default 512). */
  max_tokens?: number;
  /** 0 or unset: greedy. */
  temperature?: number;
  seed?: number;
  signal?: AbortSignal;
}

export interface Transcription {
  text: string;
  usage: { type: 'tokens'; input_tokens: number; output_tokens: number; total_tokens: number };
  tessera: TesseraInfo;
}

/** Streamed transcription events, as OpenAI's: text deltas, then the whole text. */
export type TranscriptionStreamEvent =
  | { type: 'transcript.text.delta'; delta: string }
  | { type: 'transcript.text.done'; text: string; usage: Transcription['usage']; tessera: TesseraInfo };

/**
 * Loading, in order: in a browser, the storage check ('storage': what the download costs and whether it
 * is stored); each weight file is downloaded (URLs not yet in the browser cache) and uploaded to
 * the GPU ('download', 'upload': file, loadedBytes, totalBytes); then the language model's pipelines are
 * compiled ('compile': done of total warm-up steps, `step` naming the one starting, 'done' at the end);
 * then the encoder starts, and 'ready'. The encoder worker compiles its own pipelines with the first image.
 */
export interface EngineProgress {
  /**
   * storage (browser, first): what the storage check found, before anything is downloaded; download:
   * fetched; upload: checkpoint bytes read; quantize: packed on the GPU; cache: stored quantized copy read;
   * compile: warm-up.
   */
  phase: 'storage' | 'download' | 'upload' | 'quantize' | 'cache' | 'compile' | 'ready';
  file?: string;
  loadedBytes?: number;
  totalBytes?: number;
  /** 'compile': the warm-up step starting ('prefill', 'decode', 'batch', 'sampling'), or 'done'. */
  step?: string;
  /** 'compile': steps finished. */
  done?: number;
  /** 'compile': steps in all. */
  total?: number;
  /** 'storage': the check (the same object as engine.stats().storage). */
  storage?: import('../storage/check-storage').StorageCheck;
}

export interface EngineStats {
  /**
   * Which backend runs the model and why: 'webgpu', or the CPU backend on onnxruntime ('cpu': onnxruntime-node,
   * 'wasm': onnxruntime-web). The GPU figures (gpuPool, gpuMemory, decodeStep's dispatches) are zero on the CPU backend.
   */
  device: { backend: 'webgpu' | 'cpu' | 'wasm'; reason: string };
  requests: number;
  failedRequests: number;
  /** GPU devices lost under the engine, and how many times it recreated its device and model since. */
  deviceLosses: number;
  deviceRecoveries: number;
  /** KV blocks: free includes cached blocks no running request holds (they are reused or evicted lazily). */
  kv: { numBlocks: number; numFreeBlocks: number; blockSize: number; numCachedBlocks: number; evictions: number };
  /** The scheduler: queues, batch sizes, the prefix cache, preemptions and encoder-budget stalls. */
  scheduler: {
    numWaiting: number;
    numRunning: number;
    numSteps: number;
    /** Rows (tokens) per step over the last steps: median and largest. */
    batchRows: { p50: number; max: number };
    /** Sequences per step over the last steps: median and largest. */
    batchSeqs: { p50: number; max: number };
    /** Prompt tokens looked up in the prefix cache at admission, found there, and their ratio. */
    prefixQueryTokens: number;
    prefixHitTokens: number;
    prefixHitRate: number;
    numPreemptions: number;
    /** Prefill chunks cut at the doorstep of an image whose embeddings were not ready. */
    numDoorstepStalls: number;
    /** Image embeddings being encoded now (bounded by the encoder budget). */
    encodingEmbeddings: number;
  };
  /**
   * Decode priority: its share (0 when off); the encoder time granted between model steps so far, as the
   * encoder timed its pieces; and what those grants cost decoding (their wall time on the engine's thread
   * plus the slow-down of the steps after them), which pacing holds to the share.
   */
  decodePriority: { encoderShare: number; grantedMs: number; chargedMs: number };
  gpuPool: { numLive: number; bytesLive: number; bytesFree: number };
  weightBytes: number;
  kvCacheBytes: number;
  /**
   * Every GPU buffer Tessera holds on the engine's device, now and at the high-water mark, in total and
   * per area (the buffer label's first word: `weight`, `kv-cache`, `lm` for the decoder's step buffers,
   * `vision` and `vit-attention` for the vision tower's scratch, ...); `peakByArea` sums to `peakBytes`.
   */
  gpuMemory: { bytesLive: number; peakBytes: number; byArea: Record<string, number>; peakByArea: Record<string, number> };
  encoder: import('../encoder/media-encoder').MediaEncoderStats;
  /** Media feature lifecycle transitions: ENCODING -> READY -> STAGED -> SPLICED -> PREFILLED -> released. */
  lifecycle: import('../encoder/media-encoder').LifecycleCounters;
  /** The last model step: rows, dispatches, command buffers, readbacks, and the JavaScript ms it took to encode. */
  decodeStep: {
    numTokens: number;
    numPaddedTokens: number;
    numDispatches: number;
    numCommandBuffers: number;
    numReadbacks: number;
    readbackBytes: number;
    encodeMs: number;
  };
  last?: RequestTimings & { promptTokens: number; completionTokens: number };
  /**
   * Browser engines: what the storage check found before the load: whether its downloads are stored (and
   * why not), the bytes still to download per weight file, the quota and usage, whether persist() was
   * granted. What is stored now, and deleting it: inspectStorage(), deleteStoredModel(), clearStorage().
   */
  storage?: import('../storage/check-storage').StorageCheck;
}

/**
 * How engine.profile() timed each dispatch: 'timestamp-query' reads GPU timestamps around each dispatch
 * (its own compute pass); 'submit-and-wait' (devices without the feature) submits each dispatch alone,
 * waits for it and times it on the CPU, so every dispatch also carries a submit and a wake-up.
 */
export type ProfileTiming = TimingMethod;

/** What engine.profile() runs: one vision tile of `image`, one prefill chunk of the prompt, one decode step. */
export interface ProfileOptions {
  /** An image as a request's `image` part takes it (bytes or Blob), or a URL as an `image_url` part does. */
  image?: Uint8Array | ArrayBuffer | Blob | string;
  /** The question (default 'Can you describe this image?'). */
  prompt?: string;
  /** Force a timing method (default: 'timestamp-query' when the device has it). */
  timing?: ProfileTiming;
  /**
   * Also time one decode step at each of these positions (a step's attention reads every earlier key, so
   * its cost grows with the context): each as a profiled phase and as the wall time of whole steps
   * (ProfileReport.decodeAtPositions). The scratch sequence's KV holds whatever the pool's blocks held;
   * the time does not depend on the values.
   */
  decodePositions?: readonly number[];
}

/** A decode step's wall time at one position: the median of a few whole steps, no per-dispatch timing. */
export interface DecodeAtPosition {
  position: number;
  /** Median over the runs, ms. */
  stepMs: number;
  runsMs: number[];
}

/** One kernel kind in a profiled phase. */
export interface ProfileRow {
  /** A stable name from the kernels' labels: 'matmul:register-wide', 'paged-attention', 'rms-norm', ... */
  kind: string;
  /** GPU time of its dispatches, ms. */
  ms: number;
  /** ms over the phase's total, 0..1. */
  share: number;
  /** Arithmetic over time, for kinds that compute (matmul, attention). */
  gflops?: number;
  /** Bytes read and written once each, over time: a lower bound on the traffic (repeated reads not counted). */
  gbps?: number;
  dispatches: number;
  /** The full labels of the dispatches (plan, weight format, head code), e.g. 'matmul:register-wide:q4'. */
  labels: string[];
}

export interface ProfilePhase {
  /** 'vision-tile': an Idefics3 image's first tile; 'vision-image': a Qwen-VL image's whole pass. */
  name: 'vision-tile' | 'vision-image' | 'prefill-chunk' | 'decode-step';
  /** What ran, e.g. '1 tile, 1024 patches' or '128 tokens (rows padded to 128), 64 image rows spliced'. */
  description: string;
  /** Sum of the rows' ms. */
  totalMs: number;
  dispatches: number;
  /** Largest ms first. */
  rows: ProfileRow[];
}

/** engine.profile(): GPU time per kernel kind for one vision tile, one prefill chunk and one decode step. */
export interface ProfileReport {
  timing: ProfileTiming;
  /**
   * timestamp-query: the step every raw timestamp was a multiple of, in ns, when 1 µs or coarser (the
   * implementation quantizes: Dawn in Node rounds down to 65536 ns unless told not to).
   */
  timestampQuantumNs?: number;
  adapter: string;
  kernelVariant: KernelVariant;
  /** Weight storage of the text and vision parts, e.g. 'f32' or 'vision f16, text q4'. */
  dtype: string;
  phases: ProfilePhase[];
  /** ProfileOptions.decodePositions, each one's whole-step wall time. */
  decodeAtPositions?: DecodeAtPosition[];
  notes: string[];
}
