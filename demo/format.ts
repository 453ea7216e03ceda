// Number formatting for the demo page: bytes, speeds, durations, rates.

const UNITS = ['B', 'kB', 'MB', 'GB', 'TB'];

/** Decimal units, as browsers and the Hub show file sizes: 40074272 -> "40.1 MB". */
export function formatBytes(bytes: number): string {
  let v = bytes;
  let u = 0;
  while (v >= 1000 && u < UNITS.length - 1) {
    v /= 1000;
    u++;
  }
  return `${u === 0 ? v.toFixed(0) : v.toFixed(1)} ${UNITS[u]}`;
}

export function formatSpeed(bytesPerSecond: number): string {
  return `${formatBytes(bytesPerSecond)}/s`;
}

export function formatMs(ms: number): string {
  return ms >= 1000 ? `${(ms / 1000).toFixed(1)} s` : `${ms.toFixed(0)} ms`;
}

export function formatRate(perSecond: number, unit: string): string {
  return `${perSecond >= 100 ? perSecond.toFixed(0) : perSecond.toFixed(1)} ${unit}`;
}
