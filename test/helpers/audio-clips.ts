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

/**
 * testClip until `quietFrom` seconds, then faded over `fade` seconds to `gain` (test/reference/log_mel.py
 * quiet_clip): a clip whose second 30-second chunk is quiet while the chunk edge falls inside the loud part.
 */
export function quietClip(seconds: number, sampleRate: number, quietFrom = 30.5, fade = 0.5, gain = 0.02): Float32Array {
  const x = testClip(seconds, sampleRate);
  for (let i = 0; i < x.length; i++) {
    const t = i / sampleRate;
    const g = t < quietFrom ? 1 : t >= quietFrom + fade ? gain : 1 + ((gain - 1) * (t - quietFrom)) / fade;
    x[i] = x[i] * g;
  }
  return x;
}

/** A mono WAV file of `pcm`: 32-bit float (format 3, the samples exactly) or 16-bit PCM. */
export function wavBytes(pcm: Float32Array, sampleRate: number, format: 'f32' | 's16' = 'f32'): Uint8Array<ArrayBuffer> {
  const bytesPerSample = format === 'f32' ? 4 : 2;
  const dataBytes = pcm.length * bytesPerSample;
  const out = new Uint8Array(44 + dataBytes);
  const view = new DataView(out.buffer);
  const ascii = (o: number, s: string) => {
    for (let i = 0; i < s.length; i++) out[o + i] = s.charCodeAt(i);
  };
  ascii(0, 'RIFF');
  view.setUint32(4, 36 + dataBytes, true);
  ascii(8, 'WAVE');
  ascii(12, 'fmt ');
  view.setUint32(16, 16, true);
  view.setUint16(20, format === 'f32' ? 3 : 1, true);
  view.setUint16(22, 1, true);
  view.setUint32(24, sampleRate, true);
  view.setUint32(28, sampleRate * bytesPerSample, true);
  view.setUint16(32, bytesPerSample, true);
  view.setUint16(34, bytesPerSample * 8, true);
  ascii(36, 'data');
  view.setUint32(40, dataBytes, true);
  for (let i = 0; i < pcm.length; i++) {
    if (format === 'f32') view.setFloat32(44 + 4 * i, pcm[i], true);
    else view.setInt16(44 + 2 * i, Math.max(-32768, Math.min(32767, Math.round(pcm[i] * 32768))), true);
  }
  return out;
}
