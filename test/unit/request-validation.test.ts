// Untrusted request fields: every sampling and option field checked on every request, image parts of
// the wrong type and malformed data: URLs as named errors (not TypeError / URIError / DOMException), and
// too many images refused from their count before any image is fetched or decoded.

import { describe, expect, it, vi } from 'vitest';
import { ImageFetchError, InvalidMessageError, InvalidRequestError, TooManyImagesError } from '../../src/errors';
import { dataUrlBytes } from '../../src/engine/intake/data-url';
import { mediaPolicy } from '../../src/engine/intake/media-options';
import { toProcessorMessages } from '../../src/engine/intake/message-images';
import type { ChatCompletionRequest } from '../../src/engine/types';
import { validateRequest } from '../../src/engine/intake/validate-request';

const policy = mediaPolicy();
const text = (t: string): ChatCompletionRequest['messages'] => [{ role: 'user', content: t }];
const req = (extra: Record<string, unknown>): ChatCompletionRequest => ({ messages: text('hi'), ...extra }) as ChatCompletionRequest;

function thrown(f: () => unknown): unknown {
  try {
    f();
  } catch (e) {
    return e;
  }
  return undefined;
}

describe('validateRequest', () => {
  it('accepts the documented values and absent fields', () => {
    const none = { stop: [], includeUsage: false };
    expect(validateRequest(req({}), policy)).toEqual({ maxTokens: 128, sampling: undefined, ...none });
    const ok = req({
      max_tokens: 4,
      temperature: 0.7,
      top_p: 1,
      top_k: 40,
      seed: -3,
      stream: false,
      signal: new AbortController().signal,
      tessera: { encodeTimeoutMs: 10, textOnlyFallback: true },
    });
    expect(validateRequest(ok, policy)).toEqual({ maxTokens: 4, sampling: { temperature: 0.7, topK: 40, topP: 1, seed: -3 }, ...none });
    expect(validateRequest(req({ temperature: 0, top_p: null, top_k: 0, seed: Date.now() }), policy)).toEqual({
      maxTokens: 128,
      sampling: undefined,
      ...none,
    });
    // OpenAI's names and options: max_completion_tokens, stop (one or a list), stream_options with a stream.
    expect(
      validateRequest(req({ max_completion_tokens: 9, stop: 'END', stream: true, stream_options: { include_usage: true } }), policy),
    ).toEqual({ maxTokens: 9, sampling: undefined, stop: ['END'], includeUsage: true });
    expect(validateRequest(req({ max_tokens: 9, max_completion_tokens: 9, stop: ['a', 'b', 'c', 'd'] }), policy)).toMatchObject({
      maxTokens: 9,
      stop: ['a', 'b', 'c', 'd'],
    });
    // Sampling fields left null take their defaults (every token, seed 0).
    expect(validateRequest(req({ temperature: 1, top_p: null, top_k: null, seed: null }), policy).sampling).toEqual({
      temperature: 1,
      topK: 0,
      topP: 1,
      seed: 0,
    });
  });

  for (const [field, value] of [
    ['top_p', 0],
    ['top_p', -1],
    ['top_p', 1.5],
    ['top_p', NaN],
    ['temperature', NaN],
    ['temperature', -1],
    ['temperature', Infinity],
    ['temperature', '0.7'],
    ['top_k', -1],
    ['top_k', 2.5],
    ['seed', 1.5],
    ['seed', 'abc'],
    ['seed', 2 ** 60],
    ['max_tokens', 0],
    ['max_tokens', 2.5],
    ['max_tokens', '10'],
    ['stream', 'yes'],
    ['signal', {}],
  ] as const) {
    it(`${field} = ${String(value)} is an InvalidRequestError naming the field`, () => {
      const err = thrown(() => validateRequest(req({ [field]: value }), policy));
      expect(err).toBeInstanceOf(InvalidRequestError);
      expect((err as InvalidRequestError).field).toBe(field);
      expect((err as Error).message.startsWith(`${field} is `)).toBe(true);
    });
  }

  it('tessera options are checked too', () => {
    for (const tessera of [{ encodeTimeoutMs: -5 }, { allowReducedResolution: 'yes' }, 'fast']) {
      expect(thrown(() => validateRequest(req({ tessera }), policy))).toBeInstanceOf(InvalidRequestError);
    }
  });

  it('too many images are refused from their count, before any is fetched or decoded', async () => {
    const fetchImpl = vi.fn();
    const many = Array.from({ length: 17 }, () => ({ type: 'image_url' as const, image_url: { url: 'https://images.example/x.png' } }));
    const r: ChatCompletionRequest = { messages: [{ role: 'user', content: [...many, { type: 'text', text: 'hi' }] }] };
    const err = thrown(() => validateRequest(r, mediaPolicy({}, { fetchImpl: fetchImpl as unknown as typeof fetch })));
    expect(err).toBeInstanceOf(TooManyImagesError);
    expect((err as Error).message).toContain('has 17 images but this engine accepts at most 16');
    expect(fetchImpl).not.toHaveBeenCalled();
    expect(validateRequest(r, mediaPolicy({ maxImagesPerRequest: 17 })).maxTokens).toBe(128);
  });
});

describe('image parts', () => {
  const one = (part: unknown) => [{ role: 'user', content: [part, { type: 'text', text: 'hi' }] }] as ChatCompletionRequest['messages'];

  it('of the wrong type are InvalidMessageError naming the part', async () => {
    for (const image of [42, 'aGVsbG8=', null, {}, [1, 2, 3], true]) {
      const err = await toProcessorMessages(one({ type: 'image', image }), policy).catch((e: unknown) => e);
      expect(err, JSON.stringify(image)).toBeInstanceOf(InvalidMessageError);
      expect((err as Error).message).toContain('messages[0].content[0].image is a');
    }
    for (const image_url of [42, null, { url: 7 }, {}]) {
      const err = await toProcessorMessages(one({ type: 'image_url', image_url }), policy).catch((e: unknown) => e);
      expect(err, JSON.stringify(image_url)).toBeInstanceOf(InvalidMessageError);
    }
    const err = await toProcessorMessages(one({ type: 'text', text: 5 }), policy).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidMessageError);
  });

  it("accept a Node Buffer, a typed-array view, an ArrayBuffer and a Blob without copying the caller's bytes away", async () => {
    const bytes = Uint8Array.from([1, 2, 3, 4, 5, 6, 7, 8]);
    for (const image of [Buffer.from(bytes), new Uint16Array(bytes.buffer), bytes.buffer, new Blob([bytes])]) {
      const [m] = await toProcessorMessages(one({ type: 'image', image }), policy);
      const part = (m.content as Array<{ type: string; image?: Uint8Array }>)[0];
      expect(Array.from(part.image!)).toEqual(Array.from(bytes));
    }
    expect(bytes.byteLength).toBe(8);
  });

  it('over media.maxImageBytes are refused before decoding', async () => {
    const err = await toProcessorMessages(one({ type: 'image', image: new Uint8Array(100) }), mediaPolicy({ maxImageBytes: 99 })).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(InvalidMessageError);
    expect((err as Error).message).toContain('is 100 bytes, over media.maxImageBytes (99)');
  });

  it('with a scheme that is not fetched are ImageFetchError', async () => {
    for (const url of ['file:///etc/passwd', 'ftp://x.example/a.png', 'not a url', 'javascript:alert(1)']) {
      const err = await toProcessorMessages(one({ type: 'image_url', image_url: { url } }), policy).catch((e: unknown) => e);
      expect(err, url).toBeInstanceOf(ImageFetchError);
      expect((err as ImageFetchError).reason).toBe('scheme');
    }
  });
});

describe('data: URLs', () => {
  const where = 'messages[0].content[0].image_url.url';

  it('decode base64 (with whitespace and without padding) and percent-encoded binary', () => {
    expect(Array.from(dataUrlBytes('data:image/png;base64,AAEC/w==', 100, where))).toEqual([0, 1, 2, 255]);
    expect(Array.from(dataUrlBytes('data:image/png;base64, AAEC\n/w', 100, where))).toEqual([0, 1, 2, 255]);
    expect(Array.from(dataUrlBytes('data:application/octet-stream,%00%01a%FF', 100, where))).toEqual([0, 1, 97, 255]);
  });

  for (const url of [
    'data:image/png;base64',
    'data:image/png;base64,@@@@',
    'data:image/png;base64,A',
    'data:image/png;base64,AA==AA',
    'data:image/png,%E0%A4%A',
    'data:image/png,100%',
    'data:image/png,%zz',
  ]) {
    it(`${url} is an InvalidMessageError, not a TypeError/URIError/DOMException`, async () => {
      const err = await toProcessorMessages([{ role: 'user', content: [{ type: 'image_url', image_url: { url } }] }], policy).catch(
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(InvalidMessageError);
      expect((err as Error).message).toContain(where);
    });
  }

  it('over the byte cap is refused from its length, before decoding', () => {
    const err = thrown(() => dataUrlBytes(`data:image/png;base64,${'A'.repeat(4000)}`, 1000, where));
    expect(err).toBeInstanceOf(InvalidMessageError);
    expect((err as Error).message).toContain('about 3000 bytes, over media.maxImageBytes (1000)');
  });
});
