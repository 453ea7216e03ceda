// Cuts a byte stream into the pieces a checkpoint reader asks for (a header's fields, then each tensor),
// as the stream's chunks arrive. Received chunks wait in a queue and are never re-concatenated; a piece
// is copied out of them chunk by chunk, and each chunk is released once copied, so reading a tensor holds
// it once plus one chunk (not all its chunks and then their copy). Used by the safetensors and GGUF
// readers.

export interface ByteReader {
  /**
   * The next n bytes in one new array (or in `into`, n bytes long), or dropped (an empty array) when `keep`
   * is false. A stream that ends first throws `truncated(bytes seen so far)`.
   */
  read(n: number, keep: boolean, truncated: (seen: number) => Error, into?: Uint8Array): Promise<Uint8Array>;
  /** File offset of the next byte read() returns. */
  readonly consumed: number;
  /** Stop reading (releases the source, e.g. a file handle) without reading the rest. */
  close(): Promise<void>;
}

export function byteReader(source: AsyncIterable<Uint8Array>, onBytes?: (bytesRead: number) => void): ByteReader {
  const it = source[Symbol.asyncIterator]();
  const chunks: Uint8Array[] = [];
  let consumed = 0;
  return {
    get consumed() {
      return consumed;
    },
    async read(n, keep, truncated, into) {
      if (into && into.byteLength !== n) throw new RangeError(`byteReader: ${n} bytes asked for into ${into.byteLength}`);
      const out = keep ? (into ?? new Uint8Array(n)) : new Uint8Array(0);
      let o = 0;
      while (o < n) {
        if (chunks.length === 0) {
          const r = await it.next();
          if (r.done) throw truncated(consumed);
          chunks.push(r.value);
          onBytes?.(consumed + r.value.byteLength);
          continue;
        }
        const c = chunks[0];
        const k = Math.min(c.byteLength, n - o);
        if (keep) out.set(c.subarray(0, k), o);
        o += k;
        consumed += k;
        if (k === c.byteLength) chunks.shift();
        else chunks[0] = c.subarray(k);
      }
      return out;
    },
    async close() {
      await it.return?.();
    },
  };
}
