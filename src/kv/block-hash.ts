// Prefix-cache hashes of full KV blocks (docs/design.md invariant 6; vLLM `hash_block_tokens` with multimodal
// extra keys). A block's hash chains its parent's hash, its token ids, and for every media item whose
// placeholders overlap the block, (media key, item start - block start):
//
//   hash(b) = blake3( "tessera.kv-block.v1" ‖ parent(b) or 32 zero bytes ‖ u32 numTokens ‖ u32 tokens…
//                     ‖ u32 numExtras ‖ (u32 keyLength ‖ key ‖ i32 offset)… )
//
// The same placeholder tokens with different images differ in the media key, so they never share KV; the
// same prompt with the same image hashes the same, so a second request reuses the first one's blocks. The
// offset pins where the item sits relative to the block (an item may start before the block: negative).
// Every field has a fixed width or an explicit length, so distinct inputs never frame to the same bytes.

import { createBLAKE3, type IHasher } from 'hash-wasm';

export interface BlockExtraKey {
  /** Content key of the media item (blake3 hex). */
  mediaKey: string;
  /** item start - block start, in tokens (negative when the item began in an earlier block). */
  offset: number;
}

export interface BlockHasher {
  hash(parent: string | undefined, tokens: ArrayLike<number>, extras: readonly BlockExtraKey[]): string;
}

const TAG = new TextEncoder().encode('tessera.kv-block.v1');
const ROOT = new Uint8Array(32);

/** A synchronous blake3 block hasher (hash-wasm's WASM is loaded once, here, asynchronously). */
export async function createBlockHasher(): Promise<BlockHasher> {
  const h: IHasher = await createBLAKE3();
  const encoder = new TextEncoder();
  return {
    hash(parent, tokens, extras) {
      const parentBytes = parent === undefined ? ROOT : hexBytes(parent);
      const keys = extras.map((e) => encoder.encode(e.mediaKey));
      const size = 4 + 4 * tokens.length + 4 + keys.reduce((a, k) => a + 8 + k.byteLength, 0);
      const body = new Uint8Array(size);
      const view = new DataView(body.buffer);
      let o = 0;
      view.setUint32(o, tokens.length, true);
      o += 4;
      for (let i = 0; i < tokens.length; i++, o += 4) view.setUint32(o, tokens[i], true);
      view.setUint32(o, extras.length, true);
      o += 4;
      extras.forEach((e, i) => {
        view.setUint32(o, keys[i].byteLength, true);
        body.set(keys[i], o + 4);
        o += 4 + keys[i].byteLength;
        view.setInt32(o, e.offset, true);
        o += 4;
      });
      h.init();
      h.update(TAG);
      h.update(parentBytes);
      h.update(body);
      return h.digest('hex');
    },
  };
}

function hexBytes(hex: string): Uint8Array {
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}
