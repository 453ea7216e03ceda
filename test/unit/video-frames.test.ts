// Video frames -> tiles as HF's SmolVLMVideoProcessor makes them: the two resizes (longest edge, even-rounded;
// then the tile square), BICUBIC on uint8 as Pillow does it, checked exactly against the Pillow tiles of the
// 4-frame golden (test/reference/make_video_goldens.py), plus the size rule on its own.

import { describe, expect, it } from 'vitest';
import { frameThumbnail, frameToTile, videoResizeSize } from '../../src/processor/video-frames';
import type { VideoProcessorConfig } from '../../src/processor/video-config';
import { videoGolden } from '../helpers/video';

const TINY: VideoProcessorConfig = {
  fps: 1,
  maxFrames: 8,
  skipSecs: 1,
  longestEdge: 256,
  tileSize: 128,
  resample: 'bicubic',
  normalize: {
    doConvertRgb: true,
    doRescale: true,
    rescaleFactor: 1 / 255,
    doNormalize: true,
    imageMean: [0.5, 0.5, 0.5],
    imageStd: [0.5, 0.5, 0.5],
  },
};

describe('video frames', () => {
  it('resize size: longest edge to the target, the other int(.) and rounded up to even', () => {
    expect(videoResizeSize({ width: 96, height: 60 }, 256)).toEqual({ width: 256, height: 160 });
    expect(videoResizeSize({ width: 1920, height: 1080 }, 2048)).toEqual({ width: 2048, height: 1152 });
    expect(videoResizeSize({ width: 1080, height: 1920 }, 2048)).toEqual({ width: 1152, height: 2048 });
    expect(videoResizeSize({ width: 641, height: 479 }, 512)).toEqual({ width: 512, height: 382 }); // int(382.6) = 382, even already
    expect(videoResizeSize({ width: 640, height: 479 }, 512)).toEqual({ width: 512, height: 384 }); // int(383.2) = 383 -> 384
    expect(videoResizeSize({ width: 640, height: 481 }, 512)).toEqual({ width: 512, height: 384 }); // int(384.8) = 384
    expect(videoResizeSize({ width: 100, height: 100 }, 8192)).toEqual({ width: 4096, height: 4096 });
  });

  it("the 4 golden frames give Pillow's tiles exactly", () => {
    const g = videoGolden();
    const T = 128;
    g.frames.forEach((f, k) => {
      expect(frameToTile(f, TINY)).toEqual(g.tiles.subarray(k * 3 * T * T, (k + 1) * 3 * T * T));
    });
  });

  it('thumbnails keep the aspect ratio, never enlarge, and are opaque RGBA', () => {
    const g = videoGolden();
    const t = frameThumbnail(g.frames[0]!, 48);
    expect([t.width, t.height, t.rgba.length]).toEqual([48, 30, 48 * 30 * 4]);
    expect(t.rgba.filter((_, i) => i % 4 === 3).every((a) => a === 255)).toBe(true);
    expect(frameThumbnail(g.frames[0]!, 500).width).toBe(96);
  });
});
