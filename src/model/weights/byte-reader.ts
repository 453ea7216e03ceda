// Cuts a byte stream into the pieces a checkpoint reader asks for (a header's fields, then each tensor),
// as the stream's bytes arrive. Used by the safetensors and GGUF readers. Two ways, by what the source is:
//
//   a byte stream (`readable` of io/model-source.ts' StreamChunks, where getReader({mode: 'byob'}) works:
//   a fetch or Cache API body, a Blob's stream, in browsers and Node)
//       Small reads (header fields) are served from one 1 MiB buffer the stream fills; a large read (a
//       tensor) goes from the stream straight into the array it is asked into. No array is allocated per
//       chunk, so a browser tab holds no chunks for V8 to collect (a 4.7 GB load passed 4.7 GB of them).
//   any other async iterable (a Node file stream, a generator in memory)
//       Received chunks wait in a queue and are never re-concatenated; a piece is copied out of them chunk
//       by chunk, and each chunk is released once copied, so reading a tensor holds it once plus one chunk.

export interface ByteReader {
  /**
   * The next n bytes in one new array (or in `into`, n bytes long), or dropped (an empty array) when `keep`
   * is false. A stream that ends first throws `truncated(bytes seen so far)`. The array returned for
   * `into` may be a new view of the same memory: a byte stream's reads move `into`'s ArrayBuffer into a new
   * one (ReadableStreamBYOBReader.read transfers it), after which `into` is empty.
   */
  read(n: number, keep: boolean, truncated: (seen: number) => Error, into?: Uint8Array): Promise<Uint8Array>;
  /** File offset of the next byte read() returns. */
  readonly consumed: number;
  /** Stop reading (releases the source, e.g. a file handle) without reading the rest. */
  close(): Promise<void>;
}

/** The buffer small reads are served from (byte streams). */
const BUFFER_BYTES = 1 << 20;

export function byteReader(source: AsyncIterable<Uint8Array>, onBytes?: (bytesRead: number) => void): ByteReader {
  const readable = (source as { readable?: ReadableStream<Uint8Array> }).readable;
  const byob = readable ? byobReaderOf(readable) : undefined;
  return byob ? fromByteStream(byob, onBytes) : fromChunks(source, onBytes);
}

/** A BYOB reader of `stream`, or undefined when it is not a byte stream (its reader is not taken then). */
function byobReaderOf(stream: ReadableStream<Uint8Array>): ReadableStreamBYOBReader | undefined {
  try {
    return stream.getReader({ mode: 'byob' });
  } catch {
    return undefined;
  }
}

function checkInto(n: number, into: Uint8Array | undefined): void {
  if (into && into.byteLength !== n) throw new RangeError(`byteReader: ${n} bytes asked for into ${into.byteLength}`);
}

function fromByteStream(reader: ReadableStreamBYOBReader, onBytes?: (bytesRead: number) => void): ByteReader {
  let buffer = new Uint8Array(BUFFER_BYTES);
  /** The bytes of `buffer` received and not yet read: [start, end). */
  let start = 0;
  let end = 0;
  let consumed = 0;
  let received = 0;

  /** Bytes from the stream into `view` (at least one); undefined at the stream's end. */
  async function pull(view: Uint8Array<ArrayBuffer>): Promise<Uint8Array<ArrayBuffer> | undefined> {
    const r = await reader.read(view);
    if (r.done || !r.value || r.value.byteLength === 0) return undefined;
    received += r.value.byteLength;
    onBytes?.(received);
    return r.value;
  }

  return {
    get consumed() {
      return consumed;
    },
    async read(n, keep, truncated, into) {
      checkInto(n, into);
      let out = keep ? (into ?? new Uint8Array(n)) : undefined;
      let o = 0;
      while (o < n) {
        if (end > start) {
          const k = Math.min(end - start, n - o);
          out?.set(buffer.subarray(start, start + k), o);
          start += k;
          o += k;
          consumed += k;
          continue;
        }
        if (out && n - o >= BUFFER_BYTES) {
          // A large read: straight into `out`. The stream moves out's memory to a new ArrayBuffer.
          const got = await pull(new Uint8Array(out.buffer as ArrayBuffer, out.byteOffset + o, n - o));
          if (!got) throw truncated(consumed);
          out = new Uint8Array(got.buffer, got.byteOffset - o, n);
          o += got.byteLength;
          consumed += got.byteLength;
          continue;
        }
        const got = await pull(new Uint8Array(buffer.buffer, 0, BUFFER_BYTES));
        if (!got) throw truncated(consumed);
        buffer = new Uint8Array(got.buffer, 0, BUFFER_BYTES);
        start = 0;
        end = got.byteLength;
      }
      return out ?? new Uint8Array(0);
    },
    async close() {
      await reader.cancel().catch(() => {}); // the rest of the file is not wanted
    },
  };
}

function fromChunks(source: AsyncIterable<Uint8Array>, onBytes?: (bytesRead: number) => void): ByteReader {
  const it = source[Symbol.asyncIterator]();
  const chunks: Uint8Array[] = [];
  let consumed = 0;
  return {
    get consumed() {
      return consumed;
    },
    async read(n, keep, truncated, into) {
      checkInto(n, into);
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
