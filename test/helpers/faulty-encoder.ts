// Fault injection for encoder tests: a test backend wrapping the real encoder (an in-process backend, or
// the API an encoder worker exposes), never a switch in the product. `oomAboveTiles`: an encode of an
// image of more tiles fails as if the GPU ran out of memory, with the real named error, after the real
// prepare (so keys, layouts and retries at a reduced resolution are the product's own).

import { EncoderOutOfMemoryError } from '../../src/errors';
import type { EncodedMedia, PrepareOptions, PreparedMedia } from '../../src/protocol/encoder';

export interface EncoderFaults {
  oomAboveTiles?: number;
}

interface EncodeApi {
  prepare(bytes: Uint8Array, options?: PrepareOptions): Promise<PreparedMedia>;
  encode(key: string): Promise<EncodedMedia>;
  forget(key: string): Promise<void>;
}

/** `api` with the faults applied; `api` must be a plain object (its other members are kept as they are). */
export function withFaults<T extends EncodeApi>(api: T, faults: EncoderFaults): T {
  const limit = faults.oomAboveTiles;
  if (limit === undefined) return api;
  const tiles = new Map<string, number>();
  return {
    ...api,
    prepare: async (bytes: Uint8Array, options?: PrepareOptions) => {
      const prepared = await api.prepare(bytes, options);
      tiles.set(prepared.key, prepared.layout.numTiles);
      return prepared;
    },
    encode: async (key: string) => {
      const numTiles = tiles.get(key) ?? 0;
      if (numTiles > limit) {
        await api.forget(key);
        throw new EncoderOutOfMemoryError(numTiles, `simulated by the test backend: it fails above ${limit} tiles`);
      }
      return api.encode(key);
    },
  };
}
