// Deterministic test audio, the same PCM test/reference/log_mel.py makes: a 440 Hz tone under a slow
// envelope, a chirp rising from 200 Hz, and noise from a 32-bit LCG, rounded to float32.

export function testClip(seconds: number, sampleRate: number): Float32Array {
  const n = Math.round(seconds * sampleRate);
  const x = new Float32Array(n);
  let state = 12345;
  for (let i = 0; i < n; i++) {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    const noise = state / 4294967296 - 0.5;
    const t = i / sampleRate;
    const env = 0.5 + 0.5 * Math.sin(2 * Math.PI * 0.7 * t);
    const chirp = Math.sin(2 * Math.PI * (200 * t + 300 * t * t));
    x[i] = 0.4 * Math.sin(2 * Math.PI * 440 * t) * env + 0.25 * chirp + 0.05 * noise;
  }
  return x;
}
