// data: URLs in message parts (images and videos alike).

/** A data: URL's payload (base64 or percent-encoded); undefined when it has no comma before one. */
export function dataUrlBytes(url: string): Uint8Array | undefined {
  const comma = url.indexOf(',');
  if (comma < 0) return undefined;
  const payload = url.slice(comma + 1);
  if (url.slice(5, comma).endsWith(';base64')) return Uint8Array.from(atob(payload), (c) => c.charCodeAt(0));
  return new TextEncoder().encode(decodeURIComponent(payload));
}
