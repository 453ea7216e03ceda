// Where a load reads its tensors' bytes. A checkpoint reader (safetensors.ts, gguf/gguf-reader.ts) by
// default gives every tensor a fresh array; a load that is done with each tensor before it asks for the
// next (weights.ts, gguf/gguf-load.ts: a tensor is written to the GPU, or copied, before the loop goes on)
// reads them all into this one buffer instead. A browser tab then holds the largest tensor once, not that
// plus every earlier tensor's array until V8 collects it: a Voxtral-3B load allocates 4.7 GB of tensor
// arrays in all, two of them 768 MiB.

/** How a checkpoint reader reads tensors (openSafetensors, openGguf). */
export interface TensorReadOptions {
  /** The one buffer every tensor is read into, each valid until the next is read. Default: a fresh array each. */
  arena?: ReadArena;
  /** Tensors passed over unread (not kept in memory, not yielded): ones the load does not use. */
  skip?: (name: string) => boolean;
}

export class ReadArena {
  private buffer: ArrayBuffer | undefined;

  /**
   * Make room for a tensor of `bytes` up front (the largest a file holds for this load): a buffer grown
   * tensor by tensor would leave each smaller one behind for the collector.
   */
  reserve(bytes: number): void {
    if ((this.buffer?.byteLength ?? 0) < bytes) {
      this.buffer = undefined; // the old buffer is garbage before the new one is allocated
      this.buffer = new ArrayBuffer(bytes);
    }
  }

  /** The first `bytes` of the buffer (grown when needed), overwritten by the next take. */
  take(bytes: number): Uint8Array {
    this.reserve(bytes);
    return new Uint8Array(this.buffer!, 0, bytes);
  }

  /**
   * The array a take() was read into, as the read returned it: a byte stream's read moves the buffer's
   * memory into a new ArrayBuffer (byte-reader.ts), which is the buffer from then on.
   */
  adopt(read: Uint8Array): void {
    if (read.buffer !== this.buffer && read.byteOffset === 0) this.buffer = read.buffer as ArrayBuffer;
  }

  /** Drop the buffer (the load is over). */
  release(): void {
    this.buffer = undefined;
  }

  /** This arena as reader options, passing over the tensors `skip` names. */
  options(skip?: (name: string) => boolean): TensorReadOptions {
    return { arena: this, skip };
  }
}
