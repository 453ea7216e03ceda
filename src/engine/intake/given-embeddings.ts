// image_embeds parts: embeddings computed elsewhere (a remote engine's encoder, vLLM's disaggregated
// encoder), in vLLM's wire format (base64 of torch.save(tensor): src/protocol/torch-tensor.ts). Parsed here
// into what intake splices: the tensor (or only its uuid, naming embeddings already cached), its cache key,
// and the image's grid: Idefics3's tile grid (tessera.grid), or a Qwen-VL image's patch grid, which vLLM
// takes as a dictionary { image_embeds, image_grid_thw } (a uuid alone: tessera.grid_thw). The model's own
// sizes are checked later (checkGivenShape, intake-qwen.ts), where they are known.

import { blake3 } from 'hash-wasm';
import { EmbeddingsNotAcceptedError, EmbeddingsShapeError, InvalidMessageError } from '../../errors';
import type { ImageLayout } from '../../processor/image-layout';
import type { ChatMessage } from '../../processor/messages';
import type { PatchGrid } from '../../processor/smart-resize';
import { decodeTorchTensor, TorchFormatError } from '../../protocol/torch-tensor';
import type { MediaPolicy } from './media-options';

/** An image part's payload in a request: its encoded bytes, or embeddings the request carried (image_embeds). */
export type ImagePayload = Uint8Array | GivenEmbeddings;

/** A request's message as intake reads it (image parts hold an ImagePayload). */
export type RequestMessage = ChatMessage<ImagePayload>;

/** An image part whose embeddings the request carried (or named by uuid). */
export interface GivenEmbeddings {
  kind: 'given-embeddings';
  /** The memory-cache key: 'embeds:' + the uuid (or the blake3 of the tensor's values when none is given). */
  key: string;
  uuid?: string;
  /** Row-major values and the tensor's shape; absent when the part named cached embeddings by uuid only. */
  data?: Float32Array;
  shape?: number[];
  /** The tile grid (0 x 0: one tile, not split). */
  rows: number;
  cols: number;
  /** A Qwen-VL image's patch grid (image_grid_thw), in patches before the merge. */
  gridThw?: PatchGrid;
  /** Where the part is, for messages. */
  where: string;
}

/** The image payloads of the messages, in message order. */
export function imagePayloads(messages: readonly RequestMessage[]): ImagePayload[] {
  const out: ImagePayload[] = [];
  for (const m of messages) {
    if (typeof m.content === 'string') continue;
    for (const p of m.content) if (p.type === 'image') out.push(p.image);
  }
  return out;
}

export function isGivenEmbeddings(v: unknown): v is GivenEmbeddings {
  return typeof v === 'object' && v !== null && (v as { kind?: unknown }).kind === 'given-embeddings';
}

/**
 * The cache key given embeddings live under: never a content key (those are hex digests). A patch grid is
 * part of it: the same rows under another grid are another image's (other M-RoPE positions), so neither the
 * encoder cache nor the prefix cache may answer one with the other.
 */
function givenEmbeddingsKey(uuid: string, grid?: PatchGrid): string {
  return grid ? `embeds:${uuid}:thw=${grid.t}x${grid.h}x${grid.w}` : `embeds:${uuid}`;
}

/** The most patches along a side a grid may name (a 16384-pixel side at patch 14). */
const MAX_GRID_SIDE = 1170;

/** image_grid_thw as vLLM takes it (a tensor [1, 3] or [3], base64 of torch.save) or as [t, h, w] / [[t, h, w]]. */
function gridThwOf(raw: unknown, field: string): PatchGrid {
  let values: unknown[] | undefined;
  if (typeof raw === 'string') {
    try {
      const t = decodeTorchTensor(base64Bytes(raw, field, 1 << 16, 'the 64 KiB a grid may take'));
      if (t.data.length === 3 && (t.shape.length === 1 || (t.shape.length === 2 && t.shape[0] === 1))) values = [...t.data];
    } catch (e) {
      if (e instanceof TorchFormatError) throw new InvalidMessageError(`${field}: ${e.message}.`);
      throw e;
    }
  } else if (Array.isArray(raw)) values = raw.length === 1 && Array.isArray(raw[0]) ? raw[0] : raw;
  if (values?.length !== 3 || !values.every((v) => Number.isInteger(v) && (v as number) >= 1 && (v as number) <= MAX_GRID_SIDE)) {
    throw new InvalidMessageError(
      `${field} must be one image's patch grid [t, h, w] (a tensor of shape [1, 3] or [3], or an array), integers from 1 to ${MAX_GRID_SIDE}.`,
    );
  }
  const [t, h, w] = values as number[];
  return { t, h, w };
}

function base64Bytes(text: string, field: string, maxBytes: number, limit: string): Uint8Array {
  if (text.length * 0.75 > maxBytes + 3) {
    throw new InvalidMessageError(`${field} is about ${Math.round(text.length * 0.75)} bytes, over ${limit} (${maxBytes}).`);
  }
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text))
    throw new InvalidMessageError(`${field} is not base64 (vLLM's format: base64 of torch.save(tensor)).`);
  const bin = atob(text);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

/** An image_embeds part as intake takes it; refused by name when the engine does not take embeddings. */
export async function givenEmbeddingsOf(part: unknown, where: string, policy: MediaPolicy): Promise<GivenEmbeddings> {
  if (!policy.acceptEmbeddings) throw new EmbeddingsNotAcceptedError(where);
  const p = part as { image_embeds?: unknown; uuid?: unknown; tessera?: { grid?: unknown; grid_thw?: unknown } };
  const uuid = p.uuid ?? undefined;
  if (uuid !== undefined && (typeof uuid !== 'string' || uuid.length === 0 || uuid.length > 256)) {
    throw new InvalidMessageError(`${where}.uuid must be a non-empty string of at most 256 characters.`);
  }
  const grid = p.tessera?.grid ?? [0, 0];
  if (
    !Array.isArray(grid) ||
    grid.length !== 2 ||
    !grid.every((g) => Number.isInteger(g) && g >= 0 && g <= 64) ||
    (grid[0] === 0) !== (grid[1] === 0)
  ) {
    throw new InvalidMessageError(
      `${where}.tessera.grid must be [rows, cols], two integers from 1 to 64 (or [0, 0]: one tile, not split).`,
    );
  }
  const [rows, cols] = grid as [number, number];
  let raw = p.image_embeds ?? null;
  // vLLM's dictionary for a Qwen-VL image: the rows and their patch grid.
  let gridThw: PatchGrid | undefined;
  const dict = raw as { image_embeds?: unknown; image_grid_thw?: unknown } | null;
  if (dict !== null && typeof dict === 'object' && !ArrayBuffer.isView(dict) && 'image_embeds' in dict) {
    if (!('image_grid_thw' in dict)) {
      throw new InvalidMessageError(
        `${where}.image_embeds is a dictionary without image_grid_thw (vLLM's form for a Qwen-VL image: { image_embeds, image_grid_thw }).`,
      );
    }
    gridThw = gridThwOf(dict.image_grid_thw, `${where}.image_embeds.image_grid_thw`);
    raw = dict.image_embeds ?? null;
    if (raw === null)
      throw new InvalidMessageError(
        `${where}.image_embeds.image_embeds is missing; a part naming cached embeddings sends image_embeds: null, its uuid and its grid as ${where}.tessera.grid_thw.`,
      );
  } else if (p.tessera?.grid_thw !== undefined) gridThw = gridThwOf(p.tessera.grid_thw, `${where}.tessera.grid_thw`);
  let data: Float32Array | undefined;
  let shape: number[] | undefined;
  if (typeof raw === 'string') {
    try {
      ({ data, shape } = decodeTorchTensor(base64Bytes(raw, `${where}.image_embeds`, policy.maxImageBytes, 'media.maxImageBytes')));
    } catch (e) {
      if (e instanceof TorchFormatError) throw new InvalidMessageError(`${where}.image_embeds: ${e.message}.`);
      throw e;
    }
  } else if (raw !== null) {
    const t = raw as { data?: unknown; shape?: unknown };
    if (!(t.data instanceof Float32Array) || !Array.isArray(t.shape)) {
      throw new InvalidMessageError(
        `${where}.image_embeds must be base64 of torch.save(tensor) (vLLM's format), { data: Float32Array, shape }, or null with a uuid; a dictionary of tensors is for models that need more than one.`,
      );
    }
    data = t.data;
    shape = [...(t.shape as number[])];
    if (shape.reduce((a, b) => a * b, 1) !== data.length)
      throw new EmbeddingsShapeError(where, shape, `${data.length} values, as its data holds`);
  } else if (uuid === undefined) {
    throw new InvalidMessageError(`${where} has neither image_embeds nor a uuid naming embeddings sent before.`);
  }
  if (gridThw && p.tessera?.grid !== undefined) {
    throw new InvalidMessageError(
      `${where} has both a patch grid (image_grid_thw) and a tile grid (${where}.tessera.grid); a Qwen-VL image has only the first.`,
    );
  }
  const key = givenEmbeddingsKey(uuid ?? (await blake3(new Uint8Array(data!.buffer, data!.byteOffset, data!.byteLength))), gridThw);
  return {
    kind: 'given-embeddings',
    key,
    ...(uuid !== undefined ? { uuid } : {}),
    data,
    shape,
    rows,
    cols,
    ...(gridThw ? { gridThw } : {}),
    where,
  };
}

/** The layout an image of this grid has, as the processor would have computed it from pixels. */
export function givenLayout(g: GivenEmbeddings, tileSize: number, imageSeqLen: number): ImageLayout {
  const numTiles = g.rows * g.cols + 1;
  const size = g.rows === 0 ? { width: tileSize, height: tileSize } : { width: g.cols * tileSize, height: g.rows * tileSize };
  return {
    source: size,
    resized: size,
    encoderSize: size,
    rows: g.rows,
    cols: g.cols,
    numTiles: g.rows === 0 ? 1 : numTiles,
    tileSize,
    numImageTokens: (g.rows === 0 ? 1 : numTiles) * imageSeqLen,
  };
}

/** The values as [numImageTokens, hidden] rows, or EmbeddingsShapeError naming what this model takes. */
export function checkGivenShape(
  g: GivenEmbeddings,
  data: Float32Array,
  shape: readonly number[],
  layout: ImageLayout,
  imageSeqLen: number,
  hidden: number,
): Float32Array {
  const want = `[${layout.numTiles}, ${imageSeqLen}, ${hidden}] or [${layout.numImageTokens}, ${hidden}] (${layout.numTiles} tile${layout.numTiles > 1 ? 's' : ''} of ${imageSeqLen} tokens of ${hidden} values for tessera.grid [${g.rows}, ${g.cols}])`;
  const ok =
    (shape.length === 3 && shape[0] === layout.numTiles && shape[1] === imageSeqLen && shape[2] === hidden) ||
    (shape.length === 2 && shape[0] === layout.numImageTokens && shape[1] === hidden);
  if (!ok || data.length !== layout.numImageTokens * hidden) throw new EmbeddingsShapeError(g.where, shape, want);
  return data;
}

/** Sent values are checked once, before they are cached (values found in the cache passed this). */
export function checkFinite(g: GivenEmbeddings, data: Float32Array, shape: readonly number[]): Float32Array {
  for (let i = 0; i < data.length; i++) {
    if (!Number.isFinite(data[i])) throw new EmbeddingsShapeError(g.where, shape, `finite values (value ${i} is ${data[i]})`);
  }
  return data;
}
