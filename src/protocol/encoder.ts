// Messages between the main thread and encoder workers (types only; comlink carries the calls).
//
//   main                                   encoder worker (own GPUDevice + vision weights)
//   init(model ref)            ─────────►  load config, processor image config, vision weights
//   prepare(bytes) [transfer]  ─────────►  blake3 key, decode, resize, tile   (kept until encode/forget)
//                              ◄─────────  { key, layout }                    (counts before work)
//   encodeBatch(keys)          ─────────►  one batch (forward passes of visionBatch tiles)
//                              ◄─────────  [{ embeddings [transfer], shape }, ...]

import type { AdapterReport } from '../gpu/adapter-info';
import type { ImageLayout } from '../processor/image-layout';

/** Where the worker reads the checkpoint from; all structured-cloneable. */
export type ModelRef =
  /** files: the folder's file names when known (UrlSourceOptions.files): the worker requests no other. */
  | { kind: 'url'; url: string; files?: string[] }
  | { kind: 'dir'; path: string }
  | { kind: 'files'; files: File[] }
  | { kind: 'directory-handle'; handle: FileSystemDirectoryHandle };

export interface EncoderWorkerInit {
  model: ModelRef;
  /** Names the model in cache keys (model id + revision). */
  modelId: string;
  /** Most tiles in one encoder batch, across requests (a batch runs as forward passes of visionBatch tiles). */
  maxBatchTiles: number;
  /** Tiles per vision forward pass (GPU memory grows with it); default maxBatchTiles. */
  visionBatch?: number;
  /** Dispatches per GPU submission while encoding freely (0: one per forward pass). See VisionEncoder. */
  dispatchesPerSubmit?: number;
  /** Cut vision matmuls into row blocks of this many rows (a multiple of 64; 0 = whole), so paced pieces stay short. */
  rowsPerPiece?: number;
}

export interface EncoderWorkerInfo {
  /** Digest of everything the embeddings depend on (model, dtype, encoder config). */
  identity: string;
  imageSeqLen: number;
  hiddenSize: number;
  adapter: AdapterReport;
}

export interface PrepareOptions {
  /** Override size.longest_edge (a reduced-resolution retry after the GPU ran out of memory). */
  longestEdge?: number;
}

export interface PreparedMedia {
  key: string;
  layout: ImageLayout;
  /** Embeddings the encoder will return: layout.numTiles * imageSeqLen rows. */
  numTokens: number;
}

export interface EncodedMedia {
  key: string;
  /** [numTokens, hiddenSize] f32, transferred. */
  embeddings: Float32Array;
  numTokens: number;
  hiddenSize: number;
  /** Forward-pass time for the batch this image was in. */
  encodeMs: number;
  /** Images in that batch (1 = encoded alone). */
  batchImages: number;
}

export interface EncoderWorkerStats {
  encodes: number;
  batches: number;
  tilesEncoded: number;
  queueDepth: number;
  prepared: number;
  /** Times this encoder recreated its own lost GPU device. */
  deviceRecoveries: number;
}

export interface EncoderWorkerApi {
  init(init: EncoderWorkerInit): Promise<EncoderWorkerInfo>;
  prepare(bytes: Uint8Array, options?: PrepareOptions): Promise<PreparedMedia>;
  encode(key: string): Promise<EncodedMedia>;
  /** Encode prepared images together (one batch across requests); results in key order. */
  encodeBatch(keys: string[]): Promise<EncodedMedia[]>;
  /**
   * Decode priority (piece-gate.ts): paced, the encoder runs its GPU work only inside grants; free, it runs
   * at once. grant() lets it work for about budgetMs and resolves with the time spent.
   */
  setPaced(paced: boolean): void;
  grant(budgetMs: number): Promise<number>;
  /** Drop a prepared image that will not be encoded (cache hit, cancellation). */
  forget(key: string): Promise<void>;
  stats(): Promise<EncoderWorkerStats>;
}
