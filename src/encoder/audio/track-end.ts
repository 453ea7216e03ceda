// Where a compressed track's audio really ends, for containers that say so exactly: an MP4/M4A/MOV edit list
// (an AAC frame is 1024 samples whatever the audio's length, so the last one is padded) and an Ogg stream's
// last granule position. Decoders output the padding as audio; both audio decoders (decode-browser.ts and
// decode-node.ts, whose ffmpeg trims an edit list's start but not its end) stop here instead. MP3's end is
// its LAME tag's business (mp3-gapless.ts); other containers give no exact end and are not trimmed.

import { BufferSource, Input, MP4, OGG, QTFF } from 'mediabunny';

/** The track's duration in seconds when the container states it exactly, else undefined. */
export async function exactTrackEnd(bytes: Uint8Array): Promise<number | undefined> {
  const input = new Input({ source: new BufferSource(bytes), formats: [MP4, QTFF, OGG] });
  try {
    if (!(await input.canRead().catch(() => false))) return undefined;
    const track = await input.getPrimaryAudioTrack();
    const end = track ? await track.computeDuration() : undefined;
    return end !== undefined && Number.isFinite(end) && end > 0 ? end : undefined;
  } catch {
    return undefined; // the decoder reports what is wrong with the file
  } finally {
    input.dispose();
  }
}
