// The per-pixel settings images and video frames share (HF `Idefics3ImageProcessor` / `SmolVLMVideoProcessor`):
// convert to RGB, rescale (x rescale_factor), normalize ((x - mean) / std per channel).

export interface PixelNormalization {
  doConvertRgb: boolean;
  doRescale: boolean;
  rescaleFactor: number;
  doNormalize: boolean;
  imageMean: readonly [number, number, number];
  imageStd: readonly [number, number, number];
}
