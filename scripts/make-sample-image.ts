// Writes public/sample.png, the bundled 640x480 sample image (`npm start`, the demo, tests): a drawn
// landscape (sky, sun, mountains, lake, a red house), generated so no photo needs to be downloaded.
// Run once; the PNG is committed.

import { resolve } from 'node:path';
import sharp from 'sharp';

const W = 640;
const H = 480;

function mix(a: number[], b: number[], t: number): number[] {
  return a.map((v, i) => v + (b[i] - v) * t);
}

function pixel(x: number, y: number): number[] {
  // sky: deep blue at the top to warm orange at the horizon
  let c = mix([40, 90, 200], [250, 170, 90], Math.min(1, y / 260));
  // sun
  const dSun = Math.hypot(x - 470, y - 150);
  if (dSun < 45) c = [255, 230, 120];
  else if (dSun < 70) c = mix([255, 220, 130], c, (dSun - 45) / 25);
  // mountains: two triangles, grey-violet behind, green in front
  const back = 260 - 150 * Math.max(0, 1 - Math.abs(x - 200) / 230);
  if (y > back) c = mix([110, 100, 140], [90, 80, 120], (y - back) / 120);
  const front = 300 - 110 * Math.max(0, 1 - Math.abs(x - 430) / 200);
  if (y > front) c = mix([60, 130, 70], [40, 100, 50], (y - front) / 100);
  // lake with ripples
  if (y > 330) {
    const ripple = 12 * Math.sin(x / 18 + y / 7);
    c = mix([50, 110, 190], [20, 60, 140], (y - 330) / 150).map((v) => v + ripple);
  }
  // a red house with a dark roof on the shore
  if (x > 90 && x < 170 && y > 280 && y < 330) c = [190, 40, 40];
  if (y > 240 && y <= 280 && Math.abs(x - 130) < (y - 240) * 1.1) c = [70, 40, 30];
  if (x > 120 && x < 140 && y > 300 && y < 330) c = [80, 50, 30];
  return c.map((v) => Math.max(0, Math.min(255, Math.round(v))));
}

const data = Buffer.alloc(W * H * 3);
for (let y = 0; y < H; y++) {
  for (let x = 0; x < W; x++) data.set(pixel(x, y), (y * W + x) * 3);
}
const out = resolve(import.meta.dirname, '../public/sample.png');
await sharp(data, { raw: { width: W, height: H, channels: 3 } })
  .png({ compressionLevel: 9 })
  .toFile(out);
console.log(`wrote ${out}`);
