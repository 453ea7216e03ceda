// What the Qwen-VL page of `npm run bench:model -- --family ...` (qwen-page.ts) hands back to qwen.ts.

export interface Skipped {
  skipped: string;
}

export interface QwenRequestFigures {
  /** The vision tower's time for the request's image (ours: timings.encodeMs; the peer: vision_encoder run). */
  encodeMs: number;
  /** The peer's own image processor (ours' processing is inside its TTFT). */
  processMs?: number;
  ttftMs: number;
  decodeTokensPerSecond: number;
  promptTokens: number;
  imageTokens: number;
  tokenIds: number[];
  /** t x h x w in patches. */
  grid: string;
  /** The peer's own pixel rows against ours (normalized units; NaN when its grid differs). */
  pixelMaxAbsDiffVsOurs?: number;
  /** The peer's own image processor threw (its TTFT is then generate()'s alone): its message. */
  processorError?: string;
}

export interface QwenSideFigures {
  library: string;
  loadMs: number;
  rows: Array<{ image: string; cold: QwenRequestFigures; warm: QwenRequestFigures }>;
  /** Ours: engine.stats() (the engine's device, which in-process encoding shares); the peer: the page's probe. */
  peakGpuBytes: number;
  /** The page's createBuffer/destroy probe over the side's load and requests. */
  probePeakGpuBytes: number;
}

export interface QwenPageResult {
  userAgent: string;
  adapter: string;
  kernelVariant: string;
  ours: QwenSideFigures | Skipped;
  peer: QwenSideFigures | Skipped;
  pageSeconds: number;
}

export const isSkipped = (x: object): x is Skipped => 'skipped' in x;
