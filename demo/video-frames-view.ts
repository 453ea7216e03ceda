// The frames a video became, shown beside the answer: one strip per video part, one thumbnail per sampled
// frame with the timestamp the prompt gave the model ("MM:SS"). The pixels are the engine's own
// (tessera.videos[i].frames[j].thumbnail, asked for with the request option tessera.videoThumbnails), so
// the strip shows exactly the frames that were encoded, not frames the page picked itself.

import type { VideoInfo } from '../src/engine/types';
import type { FrameThumbnail } from '../src/processor/video-frames';
import { formatMs } from './format';

/** Longest side of the thumbnails asked for, in px (the request option tessera.videoThumbnails). */
export const VIDEO_THUMBNAIL_EDGE = 96;

/** A canvas showing the thumbnail at its own size (CSS scales it). */
function frameCanvas(t: FrameThumbnail): HTMLCanvasElement {
  const canvas = document.createElement('canvas');
  canvas.width = t.width;
  canvas.height = t.height;
  // rgba is [height, width, 4] u8, row-major: exactly ImageData's layout.
  canvas.getContext('2d')!.putImageData(new ImageData(new Uint8ClampedArray(t.rgba), t.width, t.height), 0, 0);
  return canvas;
}

/** One strip per video: "name: N frames of M (duration, fps)", then the frames. `names` is per video. */
export function renderVideoFrames(videos: readonly VideoInfo[], names: readonly string[]): HTMLElement {
  const box = document.createElement('div');
  box.className = 'video-frames';
  videos.forEach((v, i) => {
    const strip = document.createElement('figure');
    strip.className = 'video-strip';
    strip.dataset.source = v.source;
    const caption = document.createElement('figcaption');
    const fps = v.fps ? `, ${Math.round(v.fps * 100) / 100} fps` : '';
    caption.textContent =
      `${names[i] ?? `video ${i + 1}`}: the model saw ${v.frames.length} of ${v.numFrames} frames ` +
      `(${formatMs(v.duration * 1000)}${fps}${v.source === 'clip-cache' ? ', from the clip cache' : ''})`;
    const list = document.createElement('ol');
    list.className = 'frames';
    list.setAttribute('aria-label', `Sampled frames of ${names[i] ?? `video ${i + 1}`}`);
    for (const f of v.frames) {
      const item = document.createElement('li');
      item.className = 'frame';
      item.dataset.index = String(f.index);
      item.dataset.timestamp = String(f.timestamp);
      if (f.thumbnail) {
        const canvas = frameCanvas(f.thumbnail);
        canvas.setAttribute('role', 'img');
        canvas.setAttribute('aria-label', `frame ${f.index} at ${f.label}`);
        item.append(canvas);
      }
      const time = document.createElement('time');
      time.textContent = f.label;
      time.title = `frame ${f.index}, ${f.timestamp.toFixed(2)} s`;
      item.append(time);
      list.append(item);
    }
    strip.append(caption, list);
    box.append(strip);
  });
  return box;
}
