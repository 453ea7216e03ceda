// data: URLs for images (RFC 2397, as the WHATWG fetch spec reads them): `data:[<mediatype>][;base64],<data>`.
// Decoded here without atob/decodeURIComponent exceptions leaking out: a malformed URL is an
// InvalidMessageError naming what is wrong, and the decoded size is checked against the byte cap from
// the URL's length before anything is decoded.

import { InvalidMessageError } from '../../errors';

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** Base64 (whitespace allowed, padding optional) to bytes; `where` names the field in errors. */
export function base64Bytes(payload: string, where: string): Uint8Array {
  const clean = payload.replace(/[\t\n\f\r ]/g, ''); // forgiving-base64 drops ASCII whitespace
  if (!BASE64.test(clean) || clean.length % 4 === 1) {
    throw new InvalidMessageError(`${where} is a base64 data: URL whose payload is not valid base64; encode the bytes with base64.`);
  }
  const bin = atob(clean.length % 4 === 0 ? clean : clean + '='.repeat(4 - (clean.length % 4)));
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

function percentBytes(payload: string, where: string): Uint8Array {
  const utf8 = new TextEncoder().encode(payload);
  const out = new Uint8Array(utf8.length);
  let n = 0;
  for (let i = 0; i < utf8.length; i++) {
    if (utf8[i] === 0x25 /* % */) {
      const hex = String.fromCharCode(utf8[i + 1] ?? 0, utf8[i + 2] ?? 0);
      if (!/^[0-9A-Fa-f]{2}$/.test(hex)) {
        throw new InvalidMessageError(`${where} is a data: URL with a bad percent-escape at character ${i}; escape '%' as %25.`);
      }
      out[n++] = parseInt(hex, 16);
      i += 2;
    } else {
      out[n++] = utf8[i];
    }
  }
  return out.slice(0, n);
}

/** The bytes of a data: URL, at most `maxBytes` of them. `where` names the message part for errors. */
export function dataUrlBytes(url: string, maxBytes: number, where: string, media: 'image' | 'video' | 'audio' = 'image'): Uint8Array {
  const option = { image: 'media.maxImageBytes', video: 'media.maxVideoBytes', audio: 'media.maxAudioBytes' }[media];
  const comma = url.indexOf(',');
  if (!/^data:/i.test(url) || comma < 0) {
    throw new InvalidMessageError(
      `${where} is a data: URL without a ',' before its payload; use data:${{ image: 'image/png', video: 'video/mp4', audio: 'audio/wav' }[media]};base64,<bytes>.`,
    );
  }
  const meta = url.slice(5, comma);
  const payload = url.slice(comma + 1);
  const isBase64 = /;\s*base64\s*$/i.test(meta);
  // The decoded size from the text alone (3 bytes per 4 base64 characters; about one byte per
  // percent-encoded character), so an oversized URL is refused before it is decoded.
  const decodedBound = isBase64 ? Math.floor((payload.replace(/[\t\n\f\r =]/g, '').length * 3) / 4) : payload.length;
  if (decodedBound > maxBytes) {
    throw new InvalidMessageError(
      `${where} is a data: URL of about ${decodedBound} bytes, over ${option} (${maxBytes}); send a smaller ${media}.`,
    );
  }
  const bytes = isBase64 ? base64Bytes(payload, where) : percentBytes(payload, where);
  if (bytes.byteLength > maxBytes) {
    throw new InvalidMessageError(
      `${where} is a data: URL of ${bytes.byteLength} bytes, over ${option} (${maxBytes}); send a smaller ${media}.`,
    );
  }
  return bytes;
}
