// Fetching an image_url for a request: untrusted input reaching the network. Bounded and cancellable:
//
//   the request's AbortSignal ─┐
//   media.fetchTimeoutMs ──────┴─► one signal for the whole fetch, body included
//   media.maxImageBytes ──────────► Content-Length checked first; the body is read in chunks and the
//                                   read cancelled as soon as it passes the cap (never buffered whole)
//   media.blockPrivateNetwork ────► each hop's host checked before it is contacted: IP literals,
//                                   localhost, and (Node) every address the name resolves to; redirects
//                                   followed by hand (at most 5), each target checked the same way
//
// Residual risk with blockPrivateNetwork, stated plainly: the name is resolved here and again by fetch()
// itself, so a DNS server that answers differently the second time (DNS rebinding) can still steer the
// connection; an app that must rule that out should fetch images itself (through a filtering proxy or
// agent) and pass the bytes. Browsers hide redirect targets from scripts, so there a redirect is refused.

import { ImageFetchError, PrivateNetworkRefusedError, RequestAbortedError } from '../../errors';
import type { MediaPolicy } from './media-options';
import { ipKind, isLocalHostName, isPrivateAddress } from './private-network';

const MAX_REDIRECTS = 5;
const SCHEMES = new Set(['http:', 'https:', 'blob:']);

async function checkHost(url: URL, shown: string, policy: MediaPolicy, media: 'image' | 'video' | 'audio'): Promise<void> {
  if (url.protocol === 'blob:') return; // an object the page itself made, not a network host
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (isLocalHostName(host)) throw new PrivateNetworkRefusedError(shown, host);
  if (ipKind(host)) {
    if (isPrivateAddress(host)) throw new PrivateNetworkRefusedError(shown, host);
    return;
  }
  if (!policy.resolveHost) return;
  let addresses: string[];
  try {
    addresses = await policy.resolveHost(host);
  } catch (e) {
    throw new ImageFetchError(shown, 'network', `the host ${host} did not resolve (${(e as Error).message})`, { cause: e }, media);
  }
  const bad = addresses.find(isPrivateAddress);
  if (bad !== undefined) throw new PrivateNetworkRefusedError(shown, `${bad} (${host})`);
}

/** What is fetched, and its byte cap with the option that sets it (named in errors). */
export interface MediaFetchLimit {
  media: 'image' | 'video' | 'audio';
  maxBytes: number;
  option: string;
}

function imageFetchLimit(policy: MediaPolicy): MediaFetchLimit {
  return { media: 'image', maxBytes: policy.maxImageBytes, option: 'media.maxImageBytes' };
}

export function videoFetchLimit(policy: MediaPolicy): MediaFetchLimit {
  return { media: 'video', maxBytes: policy.maxVideoBytes, option: 'media.maxVideoBytes' };
}

export function audioFetchLimit(policy: MediaPolicy): MediaFetchLimit {
  return { media: 'audio', maxBytes: policy.maxAudioBytes, option: 'media.maxAudioBytes' };
}

/** The body, at most `limit.maxBytes` of it; reading stops (and the download is cancelled) past the cap. */
async function readCapped(res: Response, limit: MediaFetchLimit, shown: string): Promise<Uint8Array> {
  const { maxBytes, option, media } = limit;
  const declared = Number(res.headers.get('content-length'));
  if (declared > maxBytes) {
    await res.body?.cancel().catch(() => undefined);
    throw new ImageFetchError(shown, 'too-large', `it is ${declared} bytes, over ${option} (${maxBytes})`, undefined, media);
  }
  if (!res.body) return new Uint8Array(0);
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw new ImageFetchError(shown, 'too-large', `it sent more than ${option} (${maxBytes}) bytes`, undefined, media);
    }
    chunks.push(value);
  }
  const out = new Uint8Array(total);
  let o = 0;
  for (const c of chunks) {
    out.set(c, o);
    o += c.byteLength;
  }
  return out;
}

/** The bytes at `url` (http, https or blob), within the policy's bounds; named errors for every failure. */
export async function fetchMedia(
  url: string,
  policy: MediaPolicy,
  signal?: AbortSignal,
  limit: MediaFetchLimit = imageFetchLimit(policy),
): Promise<Uint8Array> {
  const media = limit.media;
  const shown = url.length > 200 ? `${url.slice(0, 200)}…` : url;
  let current: URL;
  try {
    current = new URL(url);
  } catch {
    throw new ImageFetchError(
      shown,
      'scheme',
      `it is not an absolute URL; use an http(s) URL, a data: URL or the ${media} bytes`,
      undefined,
      media,
    );
  }
  if (signal?.aborted) throw new RequestAbortedError(signal.reason);
  const timeout = AbortSignal.timeout(policy.fetchTimeoutMs);
  const combined = signal ? AbortSignal.any([signal, timeout]) : timeout;
  const fetchImpl = policy.fetchImpl ?? fetch;
  try {
    for (let hop = 0; ; hop++) {
      if (!SCHEMES.has(current.protocol)) {
        throw new ImageFetchError(
          shown,
          'scheme',
          `the scheme ${current.protocol} is not fetched; use http(s), a data: URL or the ${media} bytes`,
          undefined,
          media,
        );
      }
      if (policy.blockPrivateNetwork) await checkHost(current, shown, policy, media);
      const res = await fetchImpl(current.href, { signal: combined, redirect: policy.blockPrivateNetwork ? 'manual' : 'follow' });
      if (res.type === 'opaqueredirect') {
        throw new ImageFetchError(
          shown,
          'redirect',
          'it redirects, and the browser does not reveal where, so media.blockPrivateNetwork cannot check the target; pass the final URL',
          undefined,
          media,
        );
      }
      const location = res.headers.get('location');
      if (res.status >= 300 && res.status < 400 && location !== null) {
        await res.body?.cancel().catch(() => undefined);
        if (hop >= MAX_REDIRECTS) throw new ImageFetchError(shown, 'redirect', `more than ${MAX_REDIRECTS} redirects`, undefined, media);
        current = new URL(location, current);
        continue;
      }
      if (!res.ok) {
        await res.body?.cancel().catch(() => undefined);
        throw new ImageFetchError(shown, 'status', `HTTP ${res.status}${res.statusText ? ` ${res.statusText}` : ''}`, undefined, media);
      }
      return await readCapped(res, limit, shown);
    }
  } catch (e) {
    if (signal?.aborted) throw new RequestAbortedError(signal.reason);
    if (timeout.aborted)
      throw new ImageFetchError(
        shown,
        'timeout',
        `it took longer than media.fetchTimeoutMs (${policy.fetchTimeoutMs} ms)`,
        { cause: e },
        media,
      );
    if (e instanceof ImageFetchError || e instanceof PrivateNetworkRefusedError) throw e;
    throw new ImageFetchError(shown, 'network', (e as Error).message ?? String(e), { cause: e }, media);
  }
}
