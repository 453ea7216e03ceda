// image_embeds parts: embeddings computed elsewhere (a remote engine's encoder, vLLM's disaggregated
// encoder), in vLLM's wire format (base64 of torch.save(tensor): src/protocol/torch-tensor.ts). Parsed here
// into what intake splices: the tensor (or only its uuid, naming embeddings already cached), its cache key,
// and the image's tile grid. The model's own sizes are checked later (checkGivenShape), where they are known.

import { blake3 } from 'hash-wasm';
import { EmbeddingsNotAcceptedError, EmbeddingsShapeError, InvalidMessageError } from '../../errors';
import type { ImageLayout } from '../../processor/image-layout';
import type { ChatMessage } from '../../processor/messages';
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

/** The cache key given embeddings live under: never a content key (those are hex digests). */
function givenEmbeddingsKey(uuid: string): string {
  return `embeds:${uuid}`;
}

function base64Bytes(text: string, where: string, maxBytes: number): Uint8Array {
  if (text.length * 0.75 > maxBytes + 3) {
    throw new InvalidMessageError(
      `${where}.image_embeds is about ${Math.round(text.length * 0.75)} bytes, over media.maxImageBytes (${maxBytes}).`,
    );
  }
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text))
    throw new InvalidMessageError(`${where}.image_embeds is not base64 (vLLM's format: base64 of torch.save(tensor)).`);
  const bin = atob(text);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

/** An image_embeds part as intake takes it; refused by name when the engine does not take embeddings. */
export async function givenEmbeddingsOf(part: unknown, where: string, policy: MediaPolicy): Promise<GivenEmbeddings> {
  if (!policy.acceptEmbeddings) throw new EmbeddingsNotAcceptedError(where);
  const p = part as { image_embeds?: unknown; uuid?: unknown; tessera?: { grid?: unknown } };
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
  const raw = p.image_embeds ?? null;
  let data: Float32Array | undefined;
  let shape: number[] | undefined;
  if (typeof raw === 'string') {
    try {
      ({ data, shape } = decodeTorchTensor(base64Bytes(raw, where, policy.maxImageBytes)));
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
  const key = givenEmbeddingsKey(uuid ?? (await blake3(new Uint8Array(data!.buffer, data!.byteOffset, data!.byteLength))));
  return { kind: 'given-embeddings', key, ...(uuid !== undefined ? { uuid } : {}), data, shape, rows, cols, where };
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
