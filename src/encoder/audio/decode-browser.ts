// Audio decoding in a browser (the encoder Web Worker), streamed to mono at the feature extractor's rate:
//   WAV        read directly (decode-wav.ts)
//   the rest   mediabunny demuxes (MP3, Ogg/Opus/Vorbis, FLAC, AAC in ADTS, MP4/M4A/MOV, WebM/MKV: a video
//              file's first audio track too) and drives WebCodecs' AudioDecoder; each decoded sample's planes
//              are averaged into mono and passed through the band-limited resampler at once, so a long
//              recording is never held as float32 whole
// Only the encoded samples are kept: the priming before time 0 (an MP4 edit list's, Opus pre-skip, which
// mediabunny gives negative timestamps), the padding of the last frame past the track's exact end
// (track-end.ts: MP4 edit lists, Ogg), and an MP3's encoder delay and padding (its LAME tag, mp3-gapless.ts),
// so a 30 s file decodes to 30 s.
// A codec this browser's WebCodecs cannot decode is an AudioDecodeError naming it.

import { ADTS, AudioSampleSink, BufferSource, FLAC, Input, MATROSKA, MP3, MP4, OGG, QTFF, WEBM } from 'mediabunny';
import { AudioDecodeError } from '../../errors';
import { StreamingResampler } from '../../processor/audio/resample';
import { isWav } from '../../processor/audio/wav';
import { decodeWav, type AudioStreamInfo } from './decode-wav';
import { mp3Gapless } from './mp3-gapless';
import { exactTrackEnd } from './track-end';

/** The containers audio is read from (only these demuxers are bundled). */
const AUDIO_FORMATS = [MP3, OGG, FLAC, ADTS, MP4, QTFF, MATROSKA, WEBM];

export async function* decodeAudioBrowser(
  bytes: Uint8Array,
  targetRate: number,
  options: { where?: string; onInfo?: (info: AudioStreamInfo) => void } = {},
): AsyncGenerator<Float32Array> {
  const where = options.where ?? 'the audio';
  if (bytes.length === 0) throw new AudioDecodeError(`${where} is empty (0 bytes)`);
  if (isWav(bytes)) {
    yield* decodeWav(bytes, targetRate, where, options.onInfo);
    return;
  }
  const input = new Input({ source: new BufferSource(bytes), formats: AUDIO_FORMATS });
  try {
    if (!(await input.canRead().catch(() => false))) {
      throw new AudioDecodeError(
        `${where} (${bytes.length} bytes) is not an audio format this decoder reads; send WAV, MP3, Ogg/Opus, FLAC, AAC/M4A or WebM.`,
      );
    }
    const format = (await input.getFormat()).name;
    const track = await input.getPrimaryAudioTrack();
    if (!track) throw new AudioDecodeError(`${where} (a ${format} file) has no audio track`);
    const codec = (await track.getCodec()) ?? 'unknown';
    if (typeof AudioDecoder === 'undefined' || !(await track.canDecode())) {
      throw new AudioDecodeError(
        `${where}'s codec '${codec}' cannot be decoded by ${typeof AudioDecoder === 'undefined' ? 'this environment (no WebCodecs AudioDecoder)' : "this browser's WebCodecs"}; ` +
          're-encode it as Opus, AAC, MP3, FLAC or WAV, or send the samples as { pcm, sampleRate }.',
      );
    }
    options.onInfo?.({
      sampleRate: await track.getSampleRate(),
      channels: await track.getNumberOfChannels(),
      format: `${format.toLowerCase()}/${codec}`,
      decoder: 'webcodecs',
    });
    const gapless = format === 'MP3' ? mp3Gapless(bytes) : undefined;
    const end = (gapless ? undefined : await exactTrackEnd(bytes)) ?? Infinity;
    let resampler: StreamingResampler | undefined;
    let plane = new Float32Array(0);
    let decoded = 0; // frames out of the decoder so far
    let frames = 0; // frames kept
    try {
      for await (const sample of new AudioSampleSink(track).samples()) {
        try {
          // Decoders may output another rate than the container says (Opus: 48 kHz): the samples' own rate.
          resampler ??= new StreamingResampler(sample.sampleRate, targetRate);
          const n = sample.numberOfFrames;
          let from = sample.timestamp < 0 ? Math.min(n, Math.round(-sample.timestamp * sample.sampleRate)) : 0;
          let to = Number.isFinite(end) && end > 0 ? Math.max(0, Math.min(n, Math.round((end - sample.timestamp) * sample.sampleRate))) : n;
          if (gapless) {
            from = Math.max(from, gapless.skip - decoded);
            if (gapless.keep !== undefined) to = Math.min(n, gapless.skip + gapless.keep - decoded);
          }
          decoded += n;
          if (to <= from) continue;
          const mono = new Float32Array(to - from);
          if (plane.length < n) plane = new Float32Array(n);
          for (let c = 0; c < sample.numberOfChannels; c++) {
            sample.copyTo(plane, { planeIndex: c, format: 'f32-planar' });
            for (let i = from; i < to; i++) mono[i - from] += plane[i];
          }
          for (let i = 0; i < mono.length; i++) mono[i] /= sample.numberOfChannels;
          frames += mono.length;
          yield resampler.push(mono);
        } finally {
          sample.close();
        }
      }
    } catch (e) {
      if (e instanceof AudioDecodeError) throw e;
      throw new AudioDecodeError(
        `decoding ${where} (${codec}) failed: ${(e as Error)?.message ?? String(e)}; the file may be cut short or damaged.`,
        {
          cause: e,
        },
      );
    }
    if (!resampler || frames === 0) throw new AudioDecodeError(`${where} holds no audio samples`);
    yield resampler.flush();
  } finally {
    input.dispose();
  }
}

/** decodeAudioBrowser as an encoder's audio decoder (EncoderCoreDeps.decodeAudio). */
export function webCodecsAudioDecoder(): typeof decodeAudioBrowser {
  return decodeAudioBrowser;
}
