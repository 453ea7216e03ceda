"""Float64 reference of Whisper's log-mel features (WhisperFeatureExtractor), written from the published
recipe (periodic Hann window, reflect-padded STFT, |X|^2 without the last frame, Slaney mel filter bank,
log10 floored at 1e-10, max - 8, (x + 4) / 4), independently of src/processor/audio/. numpy only.

    /usr/bin/python3 test/reference/log_mel.py

Writes test/fixtures/goldens/audio/: the features of deterministic clips (test/helpers/audio-clips.ts
makes the same PCM) as little-endian f32 [mel bins, stored frames], and log-mel.json describing them.
"""
import json
import math
import os

import numpy as np

OUT = os.path.join(os.path.dirname(__file__), '..', 'fixtures', 'goldens', 'audio')


def clip(seconds, sr):
    """The PCM of test/helpers/audio-clips.ts: two tones, a chirp, an envelope and LCG noise, as float32."""
    n = int(round(seconds * sr))
    x = np.zeros(n, dtype=np.float32)
    state = 12345
    for i in range(n):
        state = (state * 1664525 + 1013904223) & 0xFFFFFFFF
        noise = state / 4294967296.0 - 0.5
        t = i / sr
        env = 0.5 + 0.5 * math.sin(2 * math.pi * 0.7 * t)
        chirp = math.sin(2 * math.pi * (200 * t + 300 * t * t))
        v = 0.4 * math.sin(2 * math.pi * 440 * t) * env + 0.25 * chirp + 0.05 * noise
        x[i] = np.float32(v)
    return x


def quiet_clip(seconds, sr, quiet_from=30.5, fade=0.5, gain=0.02):
    """clip() until quiet_from seconds, then faded over `fade` seconds to `gain` (test/helpers/audio-clips.ts quietClip):
    a clip whose second 30 s chunk is quiet while its edge falls inside the loud part."""
    x = clip(seconds, sr)
    for i in range(x.size):
        t = i / sr
        g = 1.0 if t < quiet_from else gain if t >= quiet_from + fade else 1.0 + (gain - 1.0) * (t - quiet_from) / fade
        x[i] = np.float32(float(x[i]) * g)
    return x


def hz_to_mel(f):
    f = np.asarray(f, dtype=np.float64)
    return np.where(f < 1000, 3 * f / 200, 15 + np.log(np.maximum(f, 1e-12) / 1000) * 27 / np.log(6.4))


def mel_to_hz(m):
    m = np.asarray(m, dtype=np.float64)
    return np.where(m < 15, 200 * m / 3, 1000 * np.exp(np.log(6.4) * (m - 15) / 27))


def mel_filters(n_mels, n_fft, sr):
    """[n_mels, 1 + n_fft // 2], Slaney scale and area normalisation."""
    freqs = np.linspace(0, sr // 2, 1 + n_fft // 2)
    pts = mel_to_hz(np.linspace(hz_to_mel(0.0), hz_to_mel(sr / 2), n_mels + 2))
    w = np.zeros((n_mels, freqs.size))
    for m in range(n_mels):
        lo, mid, hi = pts[m], pts[m + 1], pts[m + 2]
        w[m] = np.maximum(0, np.minimum((freqs - lo) / (mid - lo), (hi - freqs) / (hi - mid))) * (2 / (hi - lo))
    return w


def log_mel(pcm, n_mels, n_fft=400, hop=160, sr=16000, n_samples=480000):
    x = np.zeros(n_samples, dtype=np.float64)
    x[: min(len(pcm), n_samples)] = pcm[:n_samples]
    padded = np.pad(x, n_fft // 2, mode='reflect')
    window = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(n_fft) / n_fft)
    n_frames = 1 + (padded.size - n_fft) // hop
    idx = np.arange(n_fft)[None, :] + hop * np.arange(n_frames)[:, None]
    spec = np.fft.rfft(padded[idx] * window, axis=1)
    power = (spec.real ** 2 + spec.imag ** 2)[:-1].T  # [bins, frames - 1]
    mel = mel_filters(n_mels, n_fft, sr) @ power
    logm = np.log10(np.maximum(mel, 1e-10))
    logm = np.maximum(logm, logm.max() - 8.0)
    return (logm + 4.0) / 4.0


def main():
    os.makedirs(OUT, exist_ok=True)
    cases = [
        # name, seconds, mel bins, stored frames (start, stop, step)
        ('short-80', 1.3, 80, (0, 200, 1)),
        ('full-128', 30.0, 128, (0, 3000, 15)),
    ]
    manifest = {
        'description': 'Float64 log-mel features (test/reference/log_mel.py) of the clips test/helpers/audio-clips.ts makes; '
        'little-endian f32 [mel bins, stored frames]; frames outside the stored range equal tail (where given).',
        'regenerate': ['/usr/bin/python3 test/reference/log_mel.py'],
        'config': {'sampling_rate': 16000, 'n_fft': 400, 'hop_length': 160, 'n_samples': 480000},
        'cases': {},
    }
    for name, seconds, n_mels, (start, stop, step) in cases:
        feats = log_mel(clip(seconds, 16000), n_mels)
        stored = feats[:, start:stop:step]
        stored.astype('<f4').tofile(os.path.join(OUT, f'log-mel-{name}.f32.bin'))
        tail = feats[:, stop:]
        entry = {'seconds': seconds, 'mel_bins': n_mels, 'frames': feats.shape[1], 'start': start, 'stop': stop, 'step': step}
        if tail.size:
            assert np.ptp(tail) == 0, f'{name}: the frames after {stop} differ'
            entry['tail'] = float(tail[0, 0])
        manifest['cases'][name] = entry
        print(f'{name}: {feats.shape}, stored {stored.shape}, range {feats.min():.4f} .. {feats.max():.4f}')
    # A whole clip's log-mel, cut into 30-second chunks (HF VoxtralProcessor, vLLM): frames around the chunk
    # edge (which read the samples on both sides) and the last frames (the padded clip's reflected end).
    manifest['whole_clip_cases'] = {}
    for name, seconds, n_mels, ranges in [('whole-41-quiet-128', 41.0, 128, [(2900, 3100), (5900, 6000)])]:
        pcm = quiet_clip(seconds, 16000)
        chunks = math.ceil(len(pcm) / 480000)
        feats = log_mel(pcm, n_mels, n_samples=chunks * 480000)
        stored = np.concatenate([feats[:, a:b] for a, b in ranges], axis=1)
        stored.astype('<f4').tofile(os.path.join(OUT, f'log-mel-{name}.f32.bin'))
        manifest['whole_clip_cases'][name] = {'seconds': seconds, 'clip': 'quiet after 30.5 s', 'mel_bins': n_mels,
                                              'frames': feats.shape[1], 'stored_ranges': ranges}
        print(f'{name}: {feats.shape}, stored {stored.shape}, range {feats.min():.4f} .. {feats.max():.4f}')
    with open(os.path.join(OUT, 'log-mel.json'), 'w') as f:
        json.dump(manifest, f, indent=2)
        f.write('\n')


if __name__ == '__main__':
    main()
