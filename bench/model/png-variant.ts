// Byte-distinct copies of one PNG with identical pixels: a tEXt chunk ("tessera-bench" = tag) inserted
// before IEND. Tessera's encoder cache keys images by their bytes (blake3), so each measured request can
// get a copy that misses the cache and really runs the vision encoder, while decoding to the same pixels.

export class PngVariantError extends Error {
  override readonly name = 'PngVariantError';
}

function crcTable(): Uint32Array {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
}

/** CRC-32 (ISO 3309, as PNG chunks use) over bytes. */
function crc32(bytes: Uint8Array, table: Uint32Array): number {
  let c = 0xffffffff;
  for (const b of bytes) c = table[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

export function pngVariant(png: Uint8Array, tag: string): Uint8Array {
  const signature = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
  if (png.length < 20 || signature.some((b, i) => png[i] !== b)) throw new PngVariantError('not a PNG file (bad signature)');
  const iend = png.length - 12; // IEND is the last chunk: length 0, type, CRC
  if (String.fromCharCode(...png.subarray(iend + 4, iend + 8)) !== 'IEND') throw new PngVariantError('PNG does not end with an IEND chunk');
  const text = new TextEncoder().encode(`tEXttessera-bench\0${tag}`); // type + data, as the CRC covers them
  const chunk = new Uint8Array(4 + text.length + 4);
  const view = new DataView(chunk.buffer);
  view.setUint32(0, text.length - 4);
  chunk.set(text, 4);
  view.setUint32(4 + text.length, crc32(text, crcTable()));
  const out = new Uint8Array(png.length + chunk.length);
  out.set(png.subarray(0, iend));
  out.set(chunk, iend);
  out.set(png.subarray(iend), iend + chunk.length);
  return out;
}
