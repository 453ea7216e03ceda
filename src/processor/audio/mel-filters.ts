// The Slaney mel filter bank Whisper's feature extractor builds (and librosa's `mel(htk=False,
// norm="slaney")`, from which Whisper's own mel_filters were saved): num_mel triangles evenly spaced on the
// Slaney mel scale (linear below 1 kHz, logarithmic above) between minHz and maxHz, over the
// 1 + n_fft / 2 frequencies of a real FFT, each scaled to unit area (2 / its width in Hz).

/** Hz to mel, Slaney's scale: 3 mels per 200 Hz up to 1 kHz (15 mels), then 27 mels per factor 6.4. */
function hertzToMel(hz: number): number {
  return hz < 1000 ? (3 * hz) / 200 : 15 + (Math.log(hz / 1000) * 27) / Math.log(6.4);
}

function melToHertz(mel: number): number {
  return mel < 15 ? (200 * mel) / 3 : 1000 * Math.exp((Math.log(6.4) * (mel - 15)) / 27);
}

export interface MelFilterOptions {
  numMelFilters: number;
  /** FFT size: the bank covers its 1 + nFft / 2 frequency bins. */
  nFft: number;
  samplingRate: number;
  minHz?: number;
  /** Default: half the sampling rate (Whisper's extractor passes 8000 at 16 kHz, the same). */
  maxHz?: number;
}

/** The bank as [numMelFilters, 1 + nFft / 2] (row m: filter m's weight per frequency bin), float64. */
export function slaneyMelFilters(o: MelFilterOptions): Float64Array {
  const numBins = 1 + Math.floor(o.nFft / 2);
  const minMel = hertzToMel(o.minHz ?? 0);
  const maxMel = hertzToMel(o.maxHz ?? o.samplingRate / 2);
  // The triangles' corners: numMel + 2 points evenly spaced in mel, in Hz.
  const corners = Array.from({ length: o.numMelFilters + 2 }, (_, i) =>
    melToHertz(minMel + ((maxMel - minMel) * i) / (o.numMelFilters + 1)),
  );
  const out = new Float64Array(o.numMelFilters * numBins);
  for (let m = 0; m < o.numMelFilters; m++) {
    const [lo, mid, hi] = [corners[m], corners[m + 1], corners[m + 2]];
    const norm = 2 / (hi - lo);
    for (let b = 0; b < numBins; b++) {
      const hz = (b * Math.floor(o.samplingRate / 2)) / (numBins - 1);
      const rising = (hz - lo) / (mid - lo);
      const falling = (hi - hz) / (hi - mid);
      out[m * numBins + b] = Math.max(0, Math.min(rising, falling)) * norm;
    }
  }
  return out;
}
