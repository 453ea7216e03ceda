// The bounds an untrusted chat template renders under (bounded-jinja.ts applies them). Kept apart from the
// renderer so the public types (the chat template options) never import @huggingface/jinja's declarations, which do
// not resolve under NodeNext / node16 (extensionless relative imports).

export interface TemplateBounds {
  /** Most interpreter steps (nodes evaluated) per render. */
  maxSteps: number;
  /** Most wall time per render, in ms. */
  maxMs: number;
  /** Longest string (characters) or array (items) any step may produce. */
  maxValueLength: number;
  /** Most items one range() call may make. */
  maxRangeLength: number;
}

/**
 * Far above what a chat template needs, far below what blocks a page for long. Measured (shared 2-core
 * machine): SmolVLM's template renders a 3-turn chat with two images in 100-200 steps, 0.75 ms; a runaway
 * loop reaches a million steps in one to two seconds, so the 1 s time bound usually stops it first.
 */
export const DEFAULT_TEMPLATE_BOUNDS: TemplateBounds = {
  maxSteps: 1_000_000,
  maxMs: 1000,
  maxValueLength: 4_000_000,
  maxRangeLength: 100_000,
};
