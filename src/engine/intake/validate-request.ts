// Checks every field of a request before it does any work: a request is untrusted input (an app may pass
// its users' JSON straight through). Each bad field is an InvalidRequestError naming the field, its value
// and what is accepted; too many images are refused from their count, before any is fetched or decoded.
// Runs on every request: no value is remembered from an earlier one.
//
//   field                 accepted
//   max_tokens            integer >= 1 (default 128)
//   temperature           finite >= 0 (0 or unset: greedy)
//   top_p                 finite in (0, 1]            (sampling keeps the smallest set of tokens whose
//   top_k                 integer >= 0 (0: off)        probability reaches top_p; 0 would keep none)
//   seed                  safe integer (the draw uses it modulo 2^32)
//   stream                boolean
//   signal                an AbortSignal
//   tessera.*             encodeTimeoutMs finite > 0; allowReducedResolution, textOnlyFallback boolean

import { InvalidMessageError, InvalidRequestError, TooManyImagesError } from '../../errors';
import type { MediaPolicy } from './media-options';
import type { SamplingParams } from '../../model/runner/model-runner';
import type { ChatCompletionRequest } from '../types';

export const DEFAULT_MAX_TOKENS = 128;

/** What the engine runs a request with, once every field has been checked: the one place defaults are applied. */
export interface CheckedRequest {
  maxTokens: number;
  /** undefined: greedy (temperature 0 or unset). */
  sampling: Omit<SamplingParams, 'step'> | undefined;
}

const absent = (v: unknown) => v === undefined || v === null;

function optional(req: Record<string, unknown>, field: string, ok: (v: unknown) => boolean, requirement: string, prefix = ''): void {
  const v = req[field];
  if (!absent(v) && !ok(v)) throw new InvalidRequestError(`${prefix}${field}`, v, requirement);
}

const isFiniteNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

/** Image parts in the request's messages (image and image_url alike), counted without touching them. */
function countImages(messages: unknown[]): number {
  let n = 0;
  for (const m of messages) {
    const content = (m as { content?: unknown } | null)?.content;
    if (!Array.isArray(content)) continue;
    for (const p of content) {
      const type = (p as { type?: unknown } | null)?.type;
      if (type === 'image' || type === 'image_url') n++;
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
  const numImages = countImages(req.messages);
  if (numImages > policy.maxImagesPerRequest) throw new TooManyImagesError(numImages, policy.maxImagesPerRequest);
  const sampling =
    req.temperature !== undefined && req.temperature !== null && req.temperature > 0
      ? { temperature: req.temperature, topK: req.top_k ?? 0, topP: req.top_p ?? 1, seed: req.seed ?? 0 }
      : undefined;
  return { maxTokens: (r.max_tokens as number | undefined) ?? DEFAULT_MAX_TOKENS, sampling };
}
