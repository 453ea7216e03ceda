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
import type { TensorInfo } from '../model/safetensors';

const TAG = 'tessera.weights-digest.v1';

export class WeightsDigest {
  private readonly lines: string[] = [];

  /** Pass as loadVisionModel's onTensor: sees each selected tensor once. */
  readonly onTensor = async (info: TensorInfo, bytes: Uint8Array): Promise<void> => {
    this.lines.push(`${JSON.stringify([info.name, info.dtype, info.shape])} ${await checksum(bytes)}`);
  };

  async digest(): Promise<string> {
    const text = `${TAG}\0${[...this.lines].sort().join('\n')}`;
    return checksum(new TextEncoder().encode(text));
  }
}
