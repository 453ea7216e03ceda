// How Tessera's tests and benchmarks start headless Chromium with WebGPU. On a machine without a GPU,
// Chromium's WebGPU runs on SwiftShader (a CPU Vulkan) only when asked to; the networking flags keep it
// from reaching for Google services on a machine that has no internet.

import { existsSync } from 'node:fs';

export const CHROMIUM_ARGS = [
  '--enable-unsafe-webgpu',
  '--enable-unsafe-swiftshader',
  '--use-webgpu-adapter=swiftshader',
  '--no-sandbox',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
];

/** Arguments for a machine with a real GPU: WebGPU on, adapter left to Chromium. */
export const CHROMIUM_GPU_ARGS = CHROMIUM_ARGS.filter((a) => !a.includes('swiftshader'));

export function chromiumPath(): string {
  const candidates = [process.env.CHROME_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'];
  const found = candidates.find((p): p is string => Boolean(p && existsSync(p)));
  if (!found) {
    throw new Error("No Chromium found. Install Debian's chromium (npm test does this when run as root) or set CHROME_PATH.");
  }
  return found;
}

/** Launch options for playwright-core's chromium.launch(). TESSERA_REAL_GPU=1 keeps Chromium's own adapter. */
export function chromiumLaunchOptions() {
  return {
    executablePath: chromiumPath(),
    headless: true,
    args: process.env.TESSERA_REAL_GPU === '1' ? CHROMIUM_GPU_ARGS : CHROMIUM_ARGS,
  };
}
