// Checks every field of a request before it does any work: a request is untrusted input (an app may pass
// its users' JSON straight through). Each bad field is an InvalidRequestError naming the field, its value
// and what is accepted; too many images are refused from their count, before any is fetched or decoded.
// Runs on every request: no value is remembered from an earlier one.
//
//   field                 accepted
//   max_tokens            integer >= 1 (default 128); max_completion_tokens the same (both: equal)
//   temperature           finite >= 0 (0 or unset: greedy)
//   top_p                 finite in (0, 1]            (sampling keeps the smallest set of tokens whose
//   top_k                 integer >= 0 (0: off)        probability reaches top_p; 0 would keep none)
//   seed                  safe integer (the draw uses it modulo 2^32)
//   stream                boolean
//   signal                an AbortSignal
//   stop                  a string or up to 4, none empty
//   n                     integer 1 to 16
//   stream_options        { include_usage?, include_obfuscation? } booleans, with stream: true
//   frequency_penalty     finite in [-2, 2]; presence_penalty the same
//   logprobs              boolean; top_logprobs integer 0 to 20, with logprobs: true
//   response_format       { type: 'text' | 'json_object' } or { type: 'json_schema', json_schema: { name, schema } }
//                         (the schema's keywords are checked when its grammar compiles)
//   tools, tool_choice,   validate-tools.ts; a JSON response_format goes with tool_choice 'none' only
//   parallel_tool_calls
//   model                 a string (not checked: the engine has one model)
//   tessera.*             encodeTimeoutMs finite > 0; allowReducedResolution, textOnlyFallback boolean
//
// OpenAI's other fields: those that do not change the answer are accepted (user, safety_identifier,
// metadata, store, service_tier, prompt_cache_key, prompt_cache_retention); those Tessera cannot honour
// yet are refused unless absent, null or their neutral value (no functions, no logit_bias, ...), so that nothing asked for is silently ignored.

import { InvalidMessageError, InvalidRequestError, TooManyImagesError } from '../../errors';
import type { MediaPolicy } from './media-options';
import type { SamplingParams } from '../../model/runner/model-runner';
import type { ChatCompletionRequest, ResponseFormat } from '../types';
import { type ToolRequest, validateTools } from './validate-tools';

const DEFAULT_MAX_TOKENS = 128;

/** Most choices (n) one request may ask for. */
const MAX_CHOICES = 16;

/** What the engine runs a request with, once every field has been checked: the one place defaults are applied. */
export interface CheckedRequest {
  maxTokens: number;
  /** undefined: greedy (temperature 0 or unset). */
  sampling: Omit<SamplingParams, 'step'> | undefined;
  /** Stop strings (none: []). */
  stop: string[];
  /** stream_options.include_usage. */
  includeUsage: boolean;
  /** OpenAI's frequency and presence penalties; undefined when both are 0. */
  penalties: { frequency: number; presence: number } | undefined;
  /** With logprobs: true, how many alternatives each token lists (top_logprobs, 0 to 20). */
  logprobs: number | undefined;
  /** json_object or json_schema (undefined: free text). */
  responseFormat: Exclude<ResponseFormat, { type: 'text' }> | undefined;
  /** The tools offered and how they may be called (undefined: none offered). */
  tools: ToolRequest | undefined;
}

/** Most alternatives top_logprobs may ask for (OpenAI's limit). */
const MAX_TOP_LOGPROBS = 20;

function responseFormat(v: unknown): CheckedRequest['responseFormat'] {
  if (absent(v)) return undefined;
  const f = v as { type?: unknown; json_schema?: unknown };
  const want = "it must be { type: 'text' }, { type: 'json_object' } or { type: 'json_schema', json_schema: { name, schema } }.";
  if (typeof v !== 'object' || Array.isArray(v)) throw new InvalidRequestError('response_format', v, want);
  if (f.type === 'text') return undefined;
  if (f.type === 'json_object') return { type: 'json_object' };
  if (f.type !== 'json_schema') throw new InvalidRequestError('response_format.type', f.type, want);
  const js = f.json_schema as { name?: unknown; schema?: unknown; strict?: unknown; description?: unknown } | null | undefined;
  if (!js || typeof js !== 'object')
    throw new InvalidRequestError('response_format.json_schema', js, 'it must be { name, schema, strict? }.');
  if (typeof js.name !== 'string' || !/^[A-Za-z0-9_-]{1,64}$/.test(js.name)) {
    throw new InvalidRequestError(
      'response_format.json_schema.name',
      js.name,
      'it must be 1 to 64 letters, digits, underscores or dashes.',
    );
  }
  if (!absent(js.schema) && (typeof js.schema !== 'object' || Array.isArray(js.schema))) {
    throw new InvalidRequestError('response_format.json_schema.schema', js.schema, 'it must be a JSON Schema object.');
  }
  if (!absent(js.strict) && typeof js.strict !== 'boolean')
    throw new InvalidRequestError('response_format.json_schema.strict', js.strict, 'it must be true or false.');
  return { type: 'json_schema', json_schema: js as Extract<ResponseFormat, { type: 'json_schema' }>['json_schema'] };
}

const NOT_YET = 'is not implemented yet';

/** OpenAI fields Tessera cannot honour yet: [field, accepted neutral values, what to do instead]. */
const REFUSED: ReadonlyArray<[string, (v: unknown) => boolean, string]> = [
  ['functions', (v) => Array.isArray(v) && v.length === 0, "OpenAI's deprecated functions are not taken; offer them as tools."],
  ['function_call', (v) => v === 'none' || v === 'auto', "OpenAI's deprecated function_call is not taken; use tool_choice."],
  ['logit_bias', (v) => typeof v === 'object' && Object.keys(v as object).length === 0, `logit_bias ${NOT_YET}; leave it out.`],
  ['audio', () => false, 'audio output is not supported (Tessera answers in text); leave it out.'],
  [
    'modalities',
    (v) => Array.isArray(v) && v.every((m) => m === 'text'),
    "Tessera answers in text only; leave modalities out or ['text'].",
  ],
  ['prediction', () => false, 'predicted outputs are not implemented yet; leave it out.'],
  ['web_search_options', () => false, 'web search is not available on the device; leave it out.'],
  ['reasoning_effort', () => false, 'this checkpoint has no reasoning effort setting; leave it out.'],
  ['verbosity', () => false, 'this checkpoint has no verbosity setting; leave it out.'],
  ['moderation', () => false, 'moderation is not available on the device; leave it out.'],
];

/** Accepted and not acted on (identifiers, storage and tier hints of OpenAI's service): their types only. */
const ACCEPTED: ReadonlyArray<[string, (v: unknown) => boolean, string]> = [
  ['model', (v) => typeof v === 'string', 'it must be a string (not checked: the engine answers with its model).'],
  ['user', (v) => typeof v === 'string', 'it must be a string.'],
  ['safety_identifier', (v) => typeof v === 'string', 'it must be a string.'],
  ['metadata', (v) => typeof v === 'object' && !Array.isArray(v), 'it must be an object of strings.'],
  ['store', (v) => typeof v === 'boolean', 'it must be true or false.'],
  ['service_tier', (v) => typeof v === 'string', 'it must be a string.'],
  ['prompt_cache_key', (v) => typeof v === 'string', 'it must be a string.'],
  ['prompt_cache_retention', (v) => typeof v === 'string', 'it must be a string.'],
];

function stopStrings(v: unknown): string[] {
  if (absent(v)) return [];
  const list = typeof v === 'string' ? [v] : v;
  if (!Array.isArray(list) || list.length > 4 || list.some((s) => typeof s !== 'string' || s.length === 0)) {
    throw new InvalidRequestError('stop', v, 'it must be a non-empty string or an array of up to 4 of them.');
  }
  return list as string[];
}

const absent = (v: unknown) => v === undefined || v === null;

function optional(req: Record<string, unknown>, field: string, ok: (v: unknown) => boolean, requirement: string, prefix = ''): void {
  const v = req[field];
  if (!absent(v) && !ok(v)) throw new InvalidRequestError(`${prefix}${field}`, v, requirement);
}

const isFiniteNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

/** Image parts in the request's messages (image, image_url and image_embeds alike), counted without touching them. */
function countImages(messages: unknown[]): number {
  let n = 0;
  for (const m of messages) {
    const content = (m as { content?: unknown } | null)?.content;
    if (!Array.isArray(content)) continue;
    for (const p of content) {
      const type = (p as { type?: unknown } | null)?.type;
      if (type === 'image' || type === 'image_url' || type === 'image_embeds') n++;
    }
  }
  return n;
}

export function validateRequest(req: ChatCompletionRequest, policy: Pick<MediaPolicy, 'maxImagesPerRequest'>): CheckedRequest {
  if (req === null || typeof req !== 'object') throw new InvalidRequestError('the request', req, 'pass an object with messages.');
  const r = req as unknown as Record<string, unknown>;
  if (!Array.isArray(req.messages) || req.messages.length === 0)
    throw new InvalidMessageError('messages must be a non-empty array of {role, content}.');
  optional(r, 'max_tokens', (v) => Number.isSafeInteger(v) && (v as number) >= 1, 'it must be an integer of at least 1.');
  optional(r, 'max_completion_tokens', (v) => Number.isSafeInteger(v) && (v as number) >= 1, 'it must be an integer of at least 1.');
  if (!absent(r.max_tokens) && !absent(r.max_completion_tokens) && r.max_tokens !== r.max_completion_tokens) {
    throw new InvalidRequestError(
      'max_completion_tokens',
      r.max_completion_tokens,
      `max_tokens is ${r.max_tokens}: give one of them (max_completion_tokens is OpenAI's current name), or both equal.`,
    );
  }
  for (const [field, ok, requirement] of ACCEPTED) optional(r, field, ok, requirement);
  for (const [field, neutral, requirement] of REFUSED) {
    if (!absent(r[field]) && !neutral(r[field])) throw new InvalidRequestError(field, r[field], requirement);
  }
  const stop = stopStrings(r.stop);
  optional(
    r,
    'n',
    (v) => Number.isSafeInteger(v) && (v as number) >= 1 && (v as number) <= MAX_CHOICES,
    `it must be an integer from 1 to ${MAX_CHOICES}.`,
  );
  optional(r, 'temperature', (v) => isFiniteNumber(v) && v >= 0, 'it must be a finite number >= 0 (0 or unset decodes greedily).');
  optional(
    r,
    'top_p',
    (v) => isFiniteNumber(v) && v > 0 && v <= 1,
    'it must be a number in (0, 1]; use 1 (or leave it unset) to keep every token, and temperature 0 for greedy decoding.',
  );
  optional(r, 'top_k', (v) => Number.isSafeInteger(v) && (v as number) >= 0, 'it must be an integer >= 0 (0 or unset keeps every token).');
  optional(r, 'seed', (v) => Number.isSafeInteger(v), 'it must be an integer.');
  optional(r, 'stream', (v) => typeof v === 'boolean', 'it must be true or false.');
  optional(
    r,
    'stream_options',
    (v) =>
      typeof v === 'object' &&
      Object.entries(v as object).every(
        ([k, x]) => (k === 'include_usage' || k === 'include_obfuscation') && (x === undefined || typeof x === 'boolean'),
      ),
    'it must be { include_usage?: boolean, include_obfuscation?: boolean }.',
  );
  if (!absent(r.stream_options) && r.stream !== true) {
    throw new InvalidRequestError(
      'stream_options',
      r.stream_options,
      'it applies to streamed requests only: set stream: true or leave it out.',
    );
  }
  optional(
    r,
    'signal',
    (v) => typeof (v as AbortSignal).aborted === 'boolean' && typeof (v as AbortSignal).addEventListener === 'function',
    'it must be an AbortSignal.',
  );
  if (!absent(r.tessera)) {
    if (typeof r.tessera !== 'object') throw new InvalidRequestError('tessera', r.tessera, 'it must be an object of Tessera options.');
    const t = r.tessera as Record<string, unknown>;
    optional(t, 'encodeTimeoutMs', (v) => isFiniteNumber(v) && v > 0, 'it must be a positive number of milliseconds.', 'tessera.');
    optional(t, 'allowReducedResolution', (v) => typeof v === 'boolean', 'it must be true or false.', 'tessera.');
    optional(t, 'textOnlyFallback', (v) => typeof v === 'boolean', 'it must be true or false.', 'tessera.');
    optional(
      t,
      'transcription',
      (v) =>
        typeof v === 'object' &&
        v !== null &&
        Object.keys(v).every((k) => k === 'language') &&
        ((v as { language?: unknown }).language === undefined || typeof (v as { language?: unknown }).language === 'string'),
      "it must be { language?: 'en' } (a two-letter ISO 639-1 code, or none).",
      'tessera.',
    );
  }
  const penalty = (v: unknown) => isFiniteNumber(v) && v >= -2 && v <= 2;
  optional(r, 'frequency_penalty', penalty, 'it must be a number from -2 to 2 (0 or unset: none).');
  optional(r, 'presence_penalty', penalty, 'it must be a number from -2 to 2 (0 or unset: none).');
  optional(r, 'logprobs', (v) => typeof v === 'boolean', 'it must be true or false.');
  optional(
    r,
    'top_logprobs',
    (v) => Number.isSafeInteger(v) && (v as number) >= 0 && (v as number) <= MAX_TOP_LOGPROBS,
    `it must be an integer from 0 to ${MAX_TOP_LOGPROBS}.`,
  );
  if (!absent(r.top_logprobs) && r.logprobs !== true) {
    throw new InvalidRequestError('top_logprobs', r.top_logprobs, 'it needs logprobs: true.');
  }
  const format = responseFormat(r.response_format);
  const tools = validateTools(r);
  if (format && tools && tools.choice !== 'none') {
    throw new InvalidRequestError(
      'response_format',
      format.type,
      "it cannot constrain an answer that may be a tool call: give the tool's parameters that schema, or set tool_choice 'none'.",
    );
  }
  const numImages = countImages(req.messages);
  if (numImages > policy.maxImagesPerRequest) throw new TooManyImagesError(numImages, policy.maxImagesPerRequest);
  const sampling =
    req.temperature !== undefined && req.temperature !== null && req.temperature > 0
      ? { temperature: req.temperature, topK: req.top_k ?? 0, topP: req.top_p ?? 1, seed: req.seed ?? 0 }
      : undefined;
  return {
    maxTokens: ((r.max_completion_tokens ?? r.max_tokens) as number | null | undefined) ?? DEFAULT_MAX_TOKENS,
    sampling,
    stop,
    includeUsage: (r.stream_options as { include_usage?: boolean } | null | undefined)?.include_usage === true,
    penalties:
      (req.frequency_penalty ?? 0) !== 0 || (req.presence_penalty ?? 0) !== 0
        ? { frequency: req.frequency_penalty ?? 0, presence: req.presence_penalty ?? 0 }
        : undefined,
    logprobs: req.logprobs === true ? (req.top_logprobs ?? 0) : undefined,
    responseFormat: format,
    tools,
  };
}
