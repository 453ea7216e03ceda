// Gapless MP3: an MP3 encoder adds silence before the audio (its delay) and after it (padding to a whole
// frame), and every MP3 decoder adds 529 samples of its own delay. Encoders that know this (LAME, and ffmpeg
// as Lavf/Lavc) write both counts in the LAME extension of the first frame's Xing/Info tag; a decoder that
// reads them gives back exactly the samples that were encoded (ffmpeg does). WebCodecs decodes frames and
// knows nothing of the tag, so a 30.000 s MP3 decodes to 30.041 s (one more chunk of audio) without this.
//
// Layout read here (the first MPEG audio frame, after any ID3v2 tag):
//   4-byte frame header, side info (17 or 32 bytes in MPEG-1, 9 or 17 in MPEG-2/2.5: mono or not),
//   'Xing' or 'Info', 4 bytes of flags, [frames: 4] [bytes: 4] [TOC: 100] [quality: 4] by flag bits 1/2/4/8,
//   then the LAME extension: 9 bytes of encoder name, ... and at byte 21 of it 12 bits of delay and 12 of
//   padding.

/** Samples every MP3 decoder outputs before the first encoded one (the synthesis filterbank's delay). */
export const MP3_DECODER_DELAY = 529;

export interface Mp3Gapless {
  /** Decoded samples (per channel) to drop at the start: the encoder's delay plus the decoder's. */
  skip: number;
  /** Samples (per channel) to keep after those, or undefined where the tag does not count frames. */
  keep?: number;
}

const ENCODERS_WITH_DELAY = new Set(['LAME', 'Lavf', 'Lavc']);

/** The gapless trim an MP3 file's LAME tag asks for, or undefined where it has none. */
export function mp3Gapless(bytes: Uint8Array): Mp3Gapless | undefined {
  let at = 0;
  // ID3v2: 'ID3', version (2), flags (1), size (4 bytes of 7 bits), plus a 10-byte footer if flagged.
  if (bytes.length >= 10 && bytes[0] === 0x49 && bytes[1] === 0x44 && bytes[2] === 0x33) {
    const size = ((bytes[6]! & 0x7f) << 21) | ((bytes[7]! & 0x7f) << 14) | ((bytes[8]! & 0x7f) << 7) | (bytes[9]! & 0x7f);
    at = 10 + size + (bytes[5]! & 0x10 ? 10 : 0);
  }
  // The first frame header: 11 sync bits, a version that exists, Layer III.
  const limit = Math.min(bytes.length - 4, at + 4096);
  while (
    at < limit &&
    !(bytes[at] === 0xff && (bytes[at + 1]! & 0xe0) === 0xe0 && ((bytes[at + 1]! >> 3) & 3) !== 1 && ((bytes[at + 1]! >> 1) & 3) === 1)
  ) {
    at++;
  }
  if (at >= limit) return undefined;
  const mpeg1 = ((bytes[at + 1]! >> 3) & 3) === 3;
  const mono = ((bytes[at + 3]! >> 6) & 3) === 3;
  const samplesPerFrame = mpeg1 ? 1152 : 576;
  let p = at + 4 + (mpeg1 ? (mono ? 17 : 32) : mono ? 9 : 17);
  const tag = ascii(bytes, p, 4);
  if (tag !== 'Xing' && tag !== 'Info') return undefined;
  const flags = u32(bytes, p + 4);
  p += 8;
  let frames: number | undefined;
  if (flags & 1) {
    frames = u32(bytes, p);
    p += 4;
  }
  if (flags & 2) p += 4;
  if (flags & 4) p += 100;
  if (flags & 8) p += 4;
  if (p + 24 > bytes.length || !ENCODERS_WITH_DELAY.has(ascii(bytes, p, 4))) return undefined;
  const delay = (bytes[p + 21]! << 4) | (bytes[p + 22]! >> 4);
  const padding = ((bytes[p + 22]! & 0x0f) << 8) | bytes[p + 23]!;
  const skip = delay + MP3_DECODER_DELAY;
  if (frames === undefined) return { skip };
  const keep = frames * samplesPerFrame - delay - padding;
  return keep > 0 ? { skip, keep } : { skip };
}

function ascii(bytes: Uint8Array, at: number, n: number): string {
  let s = '';
  for (let i = 0; i < n && at + i < bytes.length; i++) s += String.fromCharCode(bytes[at + i]!);
  return s;
}

function u32(bytes: Uint8Array, at: number): number {
  return ((bytes[at]! << 24) | (bytes[at + 1]! << 16) | (bytes[at + 2]! << 8) | bytes[at + 3]!) >>> 0;
}
