// Messages between the main thread and encoder workers (types only; comlink carries the calls).
//
//   main                                   encoder worker (own GPUDevice + vision weights)
//   init(model ref)            ─────────►  load config, processor image config, vision weights
//   prepare(bytes) [transfer]  ─────────►  blake3 key, decode, resize, tile   (kept until encode/forget)
//                              ◄─────────  { key, layout }                    (counts before work)
//   encodeBatch(keys)          ─────────►  one batch (forward passes of visionBatch tiles)
//                              ◄─────────  [{ embeddings [transfer], shape }, ...]
//   prepareVideo(clip|frames)  ─────────►  clip key; unless known: demux, sample, decode the sampled frames,
//                                          resize each to a tile, key it by its pixels (kept like images)
//                              ◄─────────  { clipKey, meta, frames: [{ key, layout, timestamp, thumbnail }] }
//   prepareAudio(file|pcm)     ─────────►  decode streamed to mono at the extractor's rate, cut into 30 s
//                                          chunks, each keyed by its PCM, its log-mel kept (like pixels)
//                              ◄─────────  { meta, chunks: [{ key, numTokens, start }] }

import type { AdapterReport } from '../gpu/adapter-info';
import type { ComputePrecision, DtypeOption } from '../model/weights/dtype';
import type { RawImage } from '../processor/image-decode';
import type { ImageLayout } from '../processor/image-layout';
import type { PatchGrid } from '../processor/smart-resize';
import type { FrameThumbnail } from '../processor/video-frames';

/** Where the worker reads a checkpoint's files from; all structured-cloneable. */
export type FolderRef =
  /**
   * files: the folder's file names when known (UrlSourceOptions.files): the worker requests no other.
   * storeDownloads false: the engine's storage check found no room, so the worker stores nothing either.
   */
  | { kind: 'url'; url: string; files?: string[]; storeDownloads?: boolean }
  | { kind: 'dir'; path: string }
  | { kind: 'files'; files: File[] }
  | { kind: 'directory-handle'; handle: FileSystemDirectoryHandle };

/** The checkpoint the worker loads: a folder's, or a GGUF pair (its model and mmproj files) in one. */
export type ModelRef = FolderRef | { kind: 'gguf'; folder: FolderRef; model: string; mmproj?: string };

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
  /** Node: the ffmpeg program that decodes MP4/WebM clips (default 'ffmpeg' on PATH). */
  ffmpegPath?: string;
  /** Weight storage of the vision tower and connector (the `vision` part of the engine's dtype). */
  dtype?: DtypeOption;
  compute?: ComputePrecision;
  /** Where the worker keeps stored quantized copies of the vision weights (none when unset). */
  weightCache?: WeightCacheRef;
  /** Which backend encodes (default 'webgpu'); 'cpu' / 'wasm' run onnx/vision_encoder.onnx on onnxruntime. */
  backend?: 'webgpu' | 'cpu' | 'wasm';
  /** Read only the encoder's tensors of the checkpoint's files, by range requests (a remote engine's encoder). */
  partialFiles?: boolean;
  /** Why that backend was chosen (for OnnxFilesMissingError's message). */
  why?: string;
  /** onnxruntime-web's .wasm location and threads, for the 'wasm' backend in a Web Worker. */
  wasm?: { wasmPaths?: string; threads?: number };
}

/** A weight store a worker can open itself: a directory (Node) or the Cache API (browsers). */
/** cache-api `model`: the checkpoint the copies are made from, recorded with each copy (listing, deleting). */
export type WeightCacheRef = { kind: 'dir'; dir: string } | { kind: 'cache-api'; model?: string };

export interface EncoderWorkerInfo {
  /** Digest of everything the embeddings depend on (model, dtype, encoder config). */
  identity: string;
  /** The encoder this checkpoint has: a vision tower (images, video frames) or an audio encoder (30 s chunks). */
  modality: 'vision' | 'audio';
  /** Image tokens per tile (0 for an audio encoder). */
  imageSeqLen: number;
  /** LM tokens per 30-second audio chunk (0 for a vision tower). */
  audioTokensPerChunk: number;
  hiddenSize: number;
  /**
   * DeepStack levels an item's embeddings carry after its rows (Qwen3-VL; 0 for every other tower): an
   * item's embeddings are [numTokens × (1 + deepstackLevels), hiddenSize].
   */
  deepstackLevels: number;
  /** The backend that encodes. */
  backend: 'webgpu' | 'cpu' | 'wasm';
  /** Its WebGPU adapter (absent on the CPU backend). */
  adapter?: AdapterReport;
  /** Its GPU device once loaded (the tower's weights and compiled buffers; absent on the CPU backend). */
  deviceMemory?: EncoderDeviceMemory;
}

export interface PrepareOptions {
  /** Override size.longest_edge (a reduced-resolution retry after the GPU ran out of memory). */
  longestEdge?: number;
  /** A Qwen-VL image's pixel budget below the checkpoint's max_pixels (the same retry). */
  maxPixels?: number;
}

export interface PreparedMedia {
  key: string;
  /** An image's or video frame's tiles (Idefics3); absent for an audio chunk and a Qwen-VL image. */
  layout?: ImageLayout;
  /** A Qwen-VL image's patch grid after the smart resize (numTokens = t·h·w / merge²). */
  grid?: PatchGrid;
  /** LM rows the encoder will return: layout.numTiles * imageSeqLen, a Qwen-VL image's merge units, or an audio chunk's tokens. */
  numTokens: number;
}

export interface EncodedMedia {
  key: string;
  /** [numTokens × (1 + deepstackLevels), hiddenSize] f32 (the rows, then each DeepStack level's), transferred. */
  embeddings: Float32Array;
  numTokens: number;
  hiddenSize: number;
  /** Forward-pass time for the batch this image was in. */
  encodeMs: number;
  /** Images in that batch (1 = encoded alone). */
  batchImages: number;
  /** The encoder's GPU device after that batch (absent on the CPU backend). */
  deviceMemory?: EncoderDeviceMemory;
}

/** GPU memory Tessera holds on an encoder's device: live now and the high-water mark (src/gpu/memory.ts). */
export interface EncoderDeviceMemory {
  bytesLive: number;
  peakBytes: number;
}

/** A video as the encoder takes it: a clip's bytes or Blob/File, or frames already chosen (all cloneable). */
export type VideoSource = Uint8Array | Blob | VideoFramesSource;

export interface VideoFramesSource {
  frames: Array<{ image: Uint8Array | RawImage; timestamp: number }>;
  /** Seconds; default: last timestamp + the spacing of the last two frames (see processor/messages.ts). */
  duration?: number;
}

export interface PrepareVideoOptions {
  /** Clip keys whose frames the caller already knows: for those nothing is demuxed or decoded. */
  knownClips?: readonly string[];
  /** Longest side in px of a thumbnail per sampled frame (absent or 0: none). */
  thumbnailEdge?: number;
}

/** How a video was read: its container's facts, and which decoder read it. */
export interface VideoMetaInfo {
  /** Frames in the clip (a frame list: its length). */
  numFrames: number;
  /** Average frame rate (0 for a frame list). */
  fps: number;
  /** Seconds (numFrames / fps, as HF's decoders report it; a frame list: its duration). */
  duration: number;
  /** Display size (rotation applied). */
  width: number;
  height: number;
  /** Video codec ('avc', 'vp9', 'gif', ...) and container ('MP4', 'WebM', ...); 'frames' for a frame list. */
  codec: string;
  container: string;
  /** 'webcodecs', 'ffmpeg+sharp', or 'frames' (a frame list: nothing demuxed). */
  decoder: string;
}

export interface PreparedVideoFrame {
  /** The frame's own media item: key = blake3(frame identity ‖ its tile's pixels), one tile, imageSeqLen tokens. */
  media: PreparedMedia;
  /** Frame index in the clip (position in a frame list). */
  index: number;
  /** Seconds (index / fps for a clip, as HF prints it). */
  timestamp: number;
  thumbnail?: FrameThumbnail;
}

export interface PreparedVideo {
  /** Whole-clip key (clip bytes + sampling/decoding config); undefined for a frame list. */
  clipKey?: string;
  /** The clip was one of knownClips: nothing was decoded and `frames` is empty. */
  known: boolean;
  meta?: VideoMetaInfo;
  frames: PreparedVideoFrame[];
  /** Frames decoded for this call, and the time container reading and decoding took. */
  numDecoded: number;
  demuxMs: number;
  decodeMs: number;
}

/**
 * Audio as the encoder takes it: an encoded file's bytes or Blob/File (WAV, MP3, Ogg/Opus, FLAC, AAC/M4A,
 * WebM, or a video file's first audio track), or PCM already decoded, at its own rate (all cloneable).
 */
export type AudioSource = Uint8Array | Blob | AudioPcm;

export interface AudioPcm {
  /** Mono samples, or channels interleaved when `channels` > 1; in [-1, 1]. */
  pcm: Float32Array;
  sampleRate: number;
  channels?: number;
}

export interface PrepareAudioOptions {
  /** Most 30-second chunks the request can hold: decoding stops with AudioTooLongError past them. */
  maxChunks: number;
  /** The context window behind maxChunks (named in AudioTooLongError). */
  contextWindow: number;
  /**
   * How chunks' log-mel features are made (default 'whole-clip': the clip's log-mel cut into chunks, as HF's
   * VoxtralProcessor and vLLM make them); 'per-chunk' makes each chunk's on its own (src/encoder/audio/prepare-audio.ts).
   */
  features?: AudioFeatures;
}

/** How an audio part's chunk features are made (PrepareAudioOptions.features). */
export type AudioFeatures = 'whole-clip' | 'per-chunk';

/** How an audio part was read. */
export interface AudioMetaInfo {
  /** Seconds of audio (before the last chunk is padded to 30 s). */
  duration: number;
  /** The source's own sampling rate and channels (averaged to mono, then resampled to the extractor's rate). */
  sampleRate: number;
  channels: number;
  /** 'wav', 'pcm' (given as samples), or the container / codec ffmpeg or WebCodecs reported. */
  format: string;
  /** 'wav', 'ffmpeg', 'webcodecs' or 'pcm'. */
  decoder: string;
}

/** One 30-second chunk: its own media item, keyed by its resampled PCM and the encoder. */
export interface PreparedAudioChunk {
  media: PreparedMedia;
  /** Chunk index in the clip, and where it starts (seconds). */
  index: number;
  start: number;
}

export interface PreparedAudio {
  meta: AudioMetaInfo;
  chunks: PreparedAudioChunk[];
  /** Time decoding (and resampling) took, and the log-mel features. */
  decodeMs: number;
  featuresMs: number;
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
  /** Sample, decode and prepare a video's frames (each then encodes like an image, by its key). */
  prepareVideo(source: VideoSource, options?: PrepareVideoOptions): Promise<PreparedVideo>;
  /** Decode an audio part and prepare its 30-second chunks (each then encodes by its key). */
  prepareAudio(source: AudioSource, options: PrepareAudioOptions): Promise<PreparedAudio>;
}
