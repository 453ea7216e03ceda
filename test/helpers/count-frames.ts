// The frames of the test clips (scripts/make-test-clips.ts): frame i shows i in binary, so a test can tell
// which frame a decoder returned. Browser-safe (the video harness page uses it too).
//
// Frame i (80 x 48): a 4 x 4 grid of 20 x 12 cells; cell k (row-major) is white (235) when bit k of i is
// set, black (16) otherwise.

export const CLIP_WIDTH = 80;
export const CLIP_HEIGHT = 48;
const CELL_W = CLIP_WIDTH / 4;
const CELL_H = CLIP_HEIGHT / 4;

/** RGB pixels of frame `index` (see the header). */
export function countFrame(index: number): Uint8Array {
  const out = new Uint8Array(CLIP_WIDTH * CLIP_HEIGHT * 3);
  for (let y = 0; y < CLIP_HEIGHT; y++) {
    for (let x = 0; x < CLIP_WIDTH; x++) {
      const cell = Math.floor(y / CELL_H) * 4 + Math.floor(x / CELL_W);
      out.fill((index >> cell) & 1 ? 235 : 16, (y * CLIP_WIDTH + x) * 3, (y * CLIP_WIDTH + x) * 3 + 3);
    }
  }
  return out;
}

/** The index a decoded count frame shows (RGB or RGBA, at the clip's size): each cell's mean against mid-grey. */
export function frameIndexOf(data: ArrayLike<number>, width: number, height: number, channels: number): number {
  let index = 0;
  for (let cell = 0; cell < 16; cell++) {
    const x0 = Math.floor(((cell % 4) * width) / 4);
    const y0 = Math.floor((Math.floor(cell / 4) * height) / 4);
    let sum = 0;
    let n = 0;
    // The cell's middle half, away from edges that lossy coding blurs.
    for (let y = y0 + Math.floor(height / 32); y < y0 + Math.floor((3 * height) / 16); y++) {
      for (let x = x0 + Math.floor(width / 32); x < x0 + Math.floor((3 * width) / 16); x++, n++) sum += data[(y * width + x) * channels]!;
    }
    if (sum / n > 128) index |= 1 << cell;
  }
  return index;
}
