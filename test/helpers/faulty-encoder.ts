// Fault injection for encoder tests: a test backend wrapping the real encoder (an in-process backend, or
// the API an encoder worker exposes), never a switch in the product. `oomAboveTiles` (`oomAboveTokens`, for
// Qwen-VL images, which have no tiles): an encode of an image (or a batch of images) of more tiles (tokens)
// fails as if the GPU ran out of memory, with the real named error, after the real prepare (so keys,
// layouts, grids and retries at a reduced resolution are the product's own).
// `hangEncodes`: encodes never settle (a stuck encoder).

import { EncoderOutOfMemoryError } from '../../src/errors';
import type { EncodedMedia, PrepareOptions, PreparedMedia } from '../../src/protocol/encoder';

export interface EncoderFaults {
  oomAboveTiles?: number;
  oomAboveTokens?: number;
  /** Encodes never settle (a stuck encoder, for the stall watchdog's tests). */
  hangEncodes?: boolean;
}

interface EncodeApi {
  prepare(bytes: Uint8Array, options?: PrepareOptions): Promise<PreparedMedia>;
  encode(key: string): Promise<EncodedMedia>;
  encodeBatch(keys: string[]): Promise<EncodedMedia[]>;
  forget(key: string): Promise<void>;
}

/** `api` with the faults applied; `api` must be a plain object (its other members are kept as they are). */
export function withFaults<T extends EncodeApi>(api: T, faults: EncoderFaults): T {
  if (faults.hangEncodes) {
    const never = () => new Promise<never>(() => {});
    return { ...api, encode: never, encodeBatch: never };
  }
  const byTokens = faults.oomAboveTokens !== undefined;
  const limit = faults.oomAboveTiles ?? faults.oomAboveTokens;
  if (limit === undefined) return api;
  const max = limit;
  const unit = byTokens ? 'tokens' : 'tiles';
  const tiles = new Map<string, number>();
  return {
    ...api,
    prepare: async (bytes: Uint8Array, options?: PrepareOptions) => {
      const prepared = await api.prepare(bytes, options);
      tiles.set(prepared.key, byTokens ? prepared.numTokens : prepared.layout!.numTiles);
      return prepared;
    },
    encode: async (key: string) => {
      await failAbove([key]);
      return api.encode(key);
    },
    encodeBatch: async (keys: string[]) => {
      await failAbove(keys);
      return api.encodeBatch(keys);
    },
  };

  /** A batch of more than `limit` tiles fails as a real one would: nothing encoded, its pixels dropped. */
  async function failAbove(keys: string[]): Promise<void> {
    const numTiles = keys.reduce((a, k) => a + (tiles.get(k) ?? 0), 0);
    if (numTiles <= max) return;
    await Promise.all(keys.map((k) => api.forget(k)));
    const detail = `simulated by the test backend: it fails above ${max} ${unit}`;
    throw new EncoderOutOfMemoryError(numTiles, detail, byTokens ? `images of ${numTiles} tokens` : undefined);
  }
}
