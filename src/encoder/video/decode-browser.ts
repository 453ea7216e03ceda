// Video decoding in a browser (an encoder Web Worker): mediabunny demuxes and drives WebCodecs'
// VideoDecoder. VideoSampleSink.samplesAtTimestamps seeks to the key frame before each sampled frame and
// decodes forward to it, closing every frame it passes, so only the sampled frames (and the short runs
// leading up to them) are ever decoded, and one decoded frame is held at a time. Each sampled frame is
// drawn on an OffscreenCanvas (rotation applied) and read back as RGBA.

import { VideoSampleSink } from 'mediabunny';
import { InternalError, VideoCodecUnsupportedError, VideoDecodeError } from '../../errors';
import type { RawImage } from '../../processor/image-decode';
import { demuxClip } from './demux';
import { isAnimatedImage, type OpenedClip, type VideoBackend } from './video-backend';

export const webCodecsVideoBackend: VideoBackend = {
  name: 'webcodecs',
  async open(source: Uint8Array | Blob): Promise<OpenedClip> {
    const animated = await isAnimatedImage(source);
    if (animated)
      throw new VideoCodecUnsupportedError(animated, 'the browser encoder (animated GIF/WebP video is decoded in Node only, with sharp)');
    const clip = await demuxClip(source);
    if (typeof VideoDecoder === 'undefined' || !(await clip.track.canDecode())) {
      clip.input.dispose();
      throw new VideoCodecUnsupportedError(
        clip.meta.codec,
        typeof VideoDecoder === 'undefined' ? 'this environment (no WebCodecs VideoDecoder)' : "this browser's WebCodecs",
      );
    }
    const { width, height } = clip.meta;
    return {
      meta: clip.meta,
      async *frames(indices: readonly number[]): AsyncGenerator<RawImage> {
        const sink = new VideoSampleSink(clip.track);
        const canvas = new OffscreenCanvas(width, height);
        const ctx = canvas.getContext('2d', { willReadFrequently: true });
        if (!ctx) throw new InternalError('OffscreenCanvas 2D context is unavailable in this worker');
        let k = 0;
        try {
          for await (const sample of sink.samplesAtTimestamps(indices.map((i) => clip.timestamps[i]!))) {
            if (!sample) throw new VideoDecodeError(`frame ${indices[k]} of the clip could not be decoded; the file may be damaged.`);
            try {
              ctx.clearRect(0, 0, width, height);
              sample.drawWithFit(ctx, { fit: 'fill' });
            } finally {
              sample.close();
            }
            k++;
            const pixels = ctx.getImageData(0, 0, width, height);
            yield { width, height, channels: 4, data: pixels.data };
          }
        } catch (e) {
          if (e instanceof VideoDecodeError) throw e;
          throw new VideoDecodeError(
            `decoding frame ${indices[k]} of the ${clip.meta.codec} clip failed (${(e as Error).message || String(e)}); the file may be cut short or damaged.`,
            {
              cause: e,
            },
          );
        }
        if (k !== indices.length)
          throw new VideoDecodeError(`the clip gave ${k} of the ${indices.length} sampled frames; it may be cut short.`);
      },
      close: () => clip.input.dispose(),
    };
  },
};
