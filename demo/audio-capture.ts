// Audio for the demo page: recording from the microphone (getUserMedia + MediaRecorder: Opus in WebM, which
// the encoder worker decodes with WebCodecs) and a preview of any audio attachment (its duration and a
// small waveform of peaks, from the page's own Web Audio decode; the model's decode happens in the worker).

/** Duration (seconds) and peak amplitudes (0..1, `bars` of them) of an audio file, or undefined if the page cannot decode it. */
export async function audioPreview(blob: Blob, bars = 48): Promise<{ duration: number; peaks: number[] } | undefined> {
  // Big files are not decoded a second time on the page just for a picture: their tile shows the name only.
  if (blob.size > 64 * 2 ** 20 || typeof OfflineAudioContext === 'undefined') return undefined;
  try {
    const ctx = new OfflineAudioContext(1, 1, 16000);
    const buffer = await ctx.decodeAudioData(await blob.arrayBuffer());
    const data = buffer.getChannelData(0);
    const step = Math.max(1, Math.floor(data.length / bars));
    const peaks: number[] = [];
    for (let b = 0; b < bars; b++) {
      let peak = 0;
      for (let i = b * step; i < Math.min(data.length, (b + 1) * step); i++) peak = Math.max(peak, Math.abs(data[i]));
      peaks.push(Math.min(1, peak));
    }
    return { duration: buffer.duration, peaks };
  } catch {
    return undefined;
  }
}

/** "0:05", "1:02:03". */
export function formatDuration(seconds: number): string {
  const s = Math.round(seconds);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const ss = String(s % 60).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${ss}` : `${m}:${ss}`;
}

/** A microphone recording in progress: stop() gives the recorded file. */
export interface Recording {
  stop(): Promise<Blob>;
  /** Seconds recorded so far. */
  elapsed(): number;
}

/** Starts recording from the microphone; the browser asks the user for permission first. */
export async function startRecording(): Promise<Recording> {
  if (!navigator.mediaDevices?.getUserMedia || typeof MediaRecorder === 'undefined') {
    throw new Error(
      'this browser cannot record audio here (no getUserMedia or MediaRecorder; pages must be served over https or localhost)',
    );
  }
  const stream = await navigator.mediaDevices.getUserMedia({ audio: true });
  const mime = ['audio/webm;codecs=opus', 'audio/webm', 'audio/ogg;codecs=opus'].find((t) => MediaRecorder.isTypeSupported(t));
  const recorder = new MediaRecorder(stream, mime ? { mimeType: mime } : undefined);
  const parts: Blob[] = [];
  recorder.addEventListener('dataavailable', (e) => {
    if (e.data.size > 0) parts.push(e.data);
  });
  const started = performance.now();
  recorder.start(250);
  return {
    elapsed: () => (performance.now() - started) / 1000,
    stop: () =>
      new Promise<Blob>((resolve) => {
        recorder.addEventListener(
          'stop',
          () => {
            for (const t of stream.getTracks()) t.stop();
            resolve(new Blob(parts, { type: recorder.mimeType || 'audio/webm' }));
          },
          { once: true },
        );
        recorder.stop();
      }),
  };
}
