// Container reading for MP4 / WebM / MKV / MOV (mediabunny: pure TypeScript, the same code in a browser
// worker and in Node). Only packet metadata is read here, never pixels: the frame count, every frame's
// presentation time (to find frame i again when decoding), and the duration, which are what SmolVLM2's
// sampling needs (counts before work, docs/design.md invariant 2).
//
//   numFrames = video packets      span = end of the last frame - start of the first      fps = numFrames / span
//   duration  = numFrames / fps (= span, as HF's decoder backends report it)

import { BlobSource, BufferSource, EncodedPacketSink, Input, MATROSKA, MP4, QTFF, WEBM, type InputVideoTrack } from 'mediabunny';

/** The containers Tessera reads video from (only these demuxers are bundled: the others add ~100s of kB). */
const VIDEO_FORMATS = [MP4, QTFF, MATROSKA, WEBM];
import { VideoDecodeError, VideoEmptyError, VideoTrackMissingError } from '../../errors';
import type { ClipMeta } from './video-backend';

export interface DemuxedClip {
  input: Input;
  track: InputVideoTrack;
  meta: ClipMeta;
  /** Every frame's presentation time in seconds, ascending (frame i of the clip is timestamps[i]). */
  timestamps: number[];
}

/** A frame rate within a billionth of an integer is that integer (container timescales round). */
function tidyRate(fps: number): number {
  const r = Math.round(fps);
  return Math.abs(fps - r) <= 1e-9 * r ? r : fps;
}

function byteLengthOf(source: Uint8Array | Blob): number {
  return source instanceof Uint8Array ? source.byteLength : source.size;
}

/** Open a clip and read its video track's packet table. Errors are named (VideoDecodeError and friends). */
export async function demuxClip(source: Uint8Array | Blob): Promise<DemuxedClip> {
  const numBytes = byteLengthOf(source);
  if (numBytes === 0) throw new VideoDecodeError('the video has 0 bytes; send the file contents, not an empty buffer.');
  const input = new Input({
    source: source instanceof Uint8Array ? new BufferSource(source) : new BlobSource(source),
    formats: VIDEO_FORMATS,
  });
  try {
    if (!(await input.canRead())) {
      throw new VideoDecodeError(
        `${numBytes} bytes are not a video container this decoder reads; send MP4 (H.264), WebM (VP8/VP9), MKV or MOV.`,
      );
    }
    const track = await input.getPrimaryVideoTrack();
    if (!track) {
      const tracks = await input.getTracks();
      // No track of any kind: an MP4 cut before its index (moov) at the end reads like this.
      if (tracks.length === 0)
        throw new VideoDecodeError(
          `${numBytes} bytes hold a ${(await input.getFormat()).name} container with no tracks at all; the file may be cut short or damaged: send the whole file.`,
        );
      const names = await Promise.all(tracks.map(async (t) => `${t.type} ${(await t.getCodec()) ?? 'unknown codec'}`));
      throw new VideoTrackMissingError(numBytes, names.join(', '));
    }
    const timestamps: number[] = [];
    for await (const p of new EncodedPacketSink(track).packets(undefined, undefined, { metadataOnly: true })) timestamps.push(p.timestamp);
    timestamps.sort((a, b) => a - b);
    const end = timestamps.length > 0 ? await track.computeDuration() : 0;
    const span = timestamps.length > 0 ? end - timestamps[0]! : 0;
    if (timestamps.length === 0 || !(span > 0)) throw new VideoEmptyError(timestamps.length, span);
    const fps = tidyRate(timestamps.length / span);
    return {
      input,
      track,
      timestamps,
      meta: {
        numFrames: timestamps.length,
        fps,
        duration: timestamps.length / fps,
        width: track.displayWidth,
        height: track.displayHeight,
        codec: (await track.getCodec()) ?? 'unknown',
        container: (await input.getFormat()).name,
      },
    };
  } catch (e) {
    input.dispose();
    if (e instanceof VideoDecodeError || e instanceof VideoEmptyError || e instanceof VideoTrackMissingError) throw e;
    throw new VideoDecodeError(
      `${numBytes} bytes could not be read as a video (${(e as Error).message || String(e)}); the file may be cut short or damaged: send the whole file.`,
      { cause: e },
    );
  }
}
