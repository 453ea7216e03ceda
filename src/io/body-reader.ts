// Reading a response body (a fetch or Cache API body, a Blob's stream) without an array per chunk, and
// answering a byte stream's reads from it. Where the body is a byte stream, it is read with a BYOB reader
// into one reused 1 MiB buffer, and each reader of ours gets the bytes copied into its own array
// (src/model/weights/byte-reader.ts reads a tensor straight into the load's buffer): a multi-gigabyte
// download or stored file then leaves no chunk arrays for the collector. Other bodies are read chunk by chunk.

/** The buffer each body read goes into (byte-stream bodies) before it is copied to the reader's array. */
const READ_BYTES = 1 << 20;

/** Reads a body into a buffer of its own where the body is a byte stream, else chunk by chunk. */
export interface BodyReader {
  /**
   * Up to `want` bytes (at least one; a body's chunk may be more), undefined at the end. The array is the
   * reader's reused buffer when `reused` is true: valid until the next read.
   */
  read(want: number): Promise<{ bytes: Uint8Array; reused: boolean } | undefined>;
  cancel(reason?: unknown): Promise<void>;
  /** The Response the body belongs to, held for as long as the body is read (bodyReader's `response`). */
  readonly response?: Response;
}

/**
 * A reader of `body`: into one reused buffer when `readInto` and the body is a byte stream, else chunk by
 * chunk. `response`: the Response it is the body of, held by the reader for as long as the body is read.
 */
export function bodyReader(body: ReadableStream<Uint8Array>, response?: Response, readInto = true): BodyReader {
  let byob: ReadableStreamBYOBReader | undefined;
  try {
    byob = readInto ? body.getReader({ mode: 'byob' }) : undefined;
  } catch {
    byob = undefined; // not a byte stream
  }
  if (byob) {
    const r = byob;
    /** The reused buffer; a read moves it into a new ArrayBuffer, which is the buffer from then on. */
    let buffer: ArrayBuffer | undefined = new ArrayBuffer(READ_BYTES);
    return {
      response,
      async read(want) {
        // A read abandoned part way (a stalled download) kept the buffer: a new one then.
        const into = new Uint8Array(buffer ?? new ArrayBuffer(READ_BYTES), 0, Math.min(want, READ_BYTES));
        buffer = undefined;
        const got = await r.read(into);
        if (got.value) buffer = got.value.buffer as ArrayBuffer;
        return got.done || !got.value?.byteLength ? undefined : { bytes: got.value, reused: true };
      },
      cancel: (reason) => r.cancel(reason),
    };
  }
  const r = body.getReader();
  return {
    response,
    async read() {
      for (;;) {
        const got = await r.read();
        if (got.done) return undefined;
        if (got.value.byteLength > 0) return { bytes: got.value, reused: false };
      }
    },
    cancel: (reason) => r.cancel(reason),
  };
}

/** Bytes a byte stream's pull may give its reader: as many as its pending read's array holds (else a buffer's worth). */
export function wanted(controller: ReadableByteStreamController): number {
  return Math.min(READ_BYTES, controller.byobRequest?.view?.byteLength ?? READ_BYTES);
}

/**
 * Give `bytes` to a byte stream's reader: into its pending read's array (what does not fit is queued), else
 * queued. `reused`: the array is a buffer read into again later, so what is queued is a copy.
 */
export function deliver(controller: ReadableByteStreamController, bytes: Uint8Array, reused: boolean): void {
  const request = controller.byobRequest;
  const queue = (b: Uint8Array) => controller.enqueue(reused ? b.slice() : (b as Uint8Array<ArrayBuffer>));
  if (!request?.view) {
    queue(bytes);
    return;
  }
  const k = Math.min(bytes.byteLength, request.view.byteLength);
  new Uint8Array(request.view.buffer as ArrayBuffer, request.view.byteOffset, k).set(bytes.subarray(0, k));
  request.respond(k);
  if (k < bytes.byteLength) queue(bytes.subarray(k));
}

/** End a byte stream (answering its pending read, as the streams spec requires after close()). */
export function closeBytes(controller: ReadableByteStreamController): void {
  const request = controller.byobRequest;
  controller.close();
  request?.respond(0);
}

/**
 * `body` (a Blob's stream: a picked file, a granted folder's file) read chunk by chunk and given on as a byte
 * stream, so a BYOB reader of the result (src/model/weights/byte-reader.ts) still fills its own arrays. A BYOB
 * read straight from a Blob's stream never settled now and then in Chromium 156: 1 load in 8 to 24 of
 * test/e2e/chat.spec.ts's picked files stopped inside model.safetensors (at 9.7 MB of 40 MB, in a read into a
 * tensor's array), as Cache API bodies did before cache-parts.ts read them chunk by chunk.
 */
export function readChunkwise(body: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
  const reader = bodyReader(body, undefined, false);
  return new ReadableStream({
    type: 'bytes',
    async pull(controller: ReadableByteStreamController) {
      const got = await reader.read(wanted(controller));
      if (got) deliver(controller, got.bytes, got.reused);
      else closeBytes(controller);
    },
    cancel: (reason) => reader.cancel(reason),
  });
}
