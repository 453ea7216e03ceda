// Golden readers for the browser specs (plain fs: Playwright specs cannot import Vite `?raw` modules).

import { readFileSync } from 'node:fs';

const DIR = 'test/fixtures/goldens';

export function goldenF32(name: string): Float32Array {
  const b = readFileSync(`${DIR}/${name}`);
  return new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
}

export function goldenU8(name: string): Uint8Array {
  return new Uint8Array(readFileSync(`${DIR}/${name}`));
}

export function goldenTokens(variant: string): number[] {
  return JSON.parse(readFileSync(`${DIR}/manifest.json`, 'utf8')).greedy[variant].tokens;
}
