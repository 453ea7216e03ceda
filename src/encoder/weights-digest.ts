// The identity of the weights an encoder runs: a digest of every vision and connector tensor's name,
// dtype, shape and stored bytes, collected while the encoder loads them (the bytes stream past anyway;
// blake3 runs at about 600 MB/s here, so SmolVLM-256M's 190 MB of BF16 vision weights add ~0.3 s to a
// worker's start). It goes into the encoder cache key (content-key.ts encoderIdentity), so:
//   - changed vision weights under the same modelId and cache directory are re-encoded, never served
//     stale embeddings;
//   - two checkpoints given the same modelId share entries only if their vision weights are the same;
//   - the same weights in another folder, URL or shard layout share them (order-independent; text
//     weights, which the embeddings do not depend on, are not part of it).
// A full digest of the bytes makes a revision or ETag redundant: they name a commit of the whole
// repository (a change to the text weights or a README would needlessly invalidate every entry).
//
//   digest = blake3( "tessera.weights-digest.v1" 0x00 sorted lines "<json [name, dtype, shape]> <blake3(bytes)>" )

import { checksum } from '../cache/content-key';
import type { TensorDigestSink } from '../model/weights';

const TAG = 'tessera.weights-digest.v1';

export class WeightsDigest implements TensorDigestSink {
  private readonly lines: string[] = [];

  /** A tensor's stored bytes as they load; returns their checksum (kept in a stored quantized copy). */
  async addBytes(info: { name: string; dtype: string; shape: readonly number[] }, bytes: Uint8Array): Promise<string> {
    const sum = await checksum(bytes);
    this.addSum(info, sum);
    return sum;
  }

  /** A tensor read from a stored quantized copy: the checksum its source bytes had when the copy was made. */
  addSum(info: { name: string; dtype: string; shape: readonly number[] }, sum: string): void {
    this.lines.push(`${JSON.stringify([info.name, info.dtype, info.shape])} ${sum}`);
  }

  async digest(): Promise<string> {
    const text = `${TAG}\0${[...this.lines].sort().join('\n')}`;
    return checksum(new TextEncoder().encode(text));
  }
}
