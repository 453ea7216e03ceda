// The remote engine's messages on the wire: each image part becomes an image_embeds part (vLLM's format:
// base64 of torch.save(tensor), the media's content key as its uuid, and Tessera's tile grid; a Qwen-VL
// image's as vLLM's dictionary { image_embeds, image_grid_thw }) or, in raw
// mode, a data: URL image_url part carrying the same uuid. A uuid the server has already taken is sent
// alone (image_embeds: null) unless `resend` asks for the values again. Other parts pass through.

import { contentKey } from '../cache/content-key';
import type { ChatCompletionMessage, ChatContentPart, ImageEmbeddingsResult } from '../engine/types';
import type { MediaPolicy } from '../engine/intake/media-options';
import { imagePartBytes } from '../engine/intake/message-images';
import { encodeTorchTensor, type TorchFloatDtype } from '../protocol/torch-tensor';

export type RemoteMediaMode = 'embeds' | 'raw';

/** What encodes images on this side (the checkpoint's vision tower and connector). */
export interface LocalImageEncoder {
  readonly identity: string;
  readonly hiddenSize: number;
  readonly imageSeqLen: number;
  embeddings(bytes: Uint8Array): Promise<ImageEmbeddingsResult>;
}

/** How the parts of one request went out. */
export interface WirePartsCount {
  embeds: number;
  /** image_embeds parts sent with only their uuid (the server had the values). */
  byUuid: number;
  raw: number;
  /** Image bytes in the body (raw parts). */
  imageBytes: number;
}

export interface WireMessagesInput {
  messages: ChatCompletionMessage[];
  mode: RemoteMediaMode;
  encoder: LocalImageEncoder;
  policy: MediaPolicy;
  /** uuids the server holds: sent alone. */
  known: ReadonlySet<string>;
  /** The embeddings' dtype on the wire. */
  dtype: TorchFloatDtype;
  signal?: AbortSignal;
}

function base64(bytes: Uint8Array): string {
  let s = '';
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(s);
}

/** The image's type from its first bytes (PNG, JPEG, WebP, GIF), for its data: URL. */
function mimeOf(b: Uint8Array): string {
  if (b[0] === 0x89 && b[1] === 0x50) return 'image/png';
  if (b[0] === 0xff && b[1] === 0xd8) return 'image/jpeg';
  if (b[0] === 0x52 && b[1] === 0x49 && b[8] === 0x57) return 'image/webp';
  if (b[0] === 0x47 && b[1] === 0x49) return 'image/gif';
  return 'application/octet-stream';
}

/** The messages as they go on the wire, with the uuids they name and how many parts of each kind. */
export async function wireMessages(input: WireMessagesInput): Promise<{ messages: unknown[]; uuids: string[]; count: WirePartsCount }> {
  const count: WirePartsCount = { embeds: 0, byUuid: 0, raw: 0, imageBytes: 0 };
  const uuids: string[] = [];
  const messages = await Promise.all(
    input.messages.map(async (m, i) => {
      if (!Array.isArray(m.content)) return m;
      const content = await Promise.all(
        m.content.map(async (p, j) => {
          if (p?.type !== 'image' && p?.type !== 'image_url') return p;
          const where = `messages[${i}].content[${j}]`;
          // An http(s) image_url in raw mode is the server's to fetch: nothing to encode here.
          if (input.mode === 'raw' && p.type === 'image_url' && /^https?:/i.test(p.image_url.url)) {
            count.raw++;
            return p;
          }
          const bytes = await imagePartBytes(p as ChatContentPart, where, input.policy, input.signal);
          if (input.mode === 'raw') {
            const uuid = await contentKey(input.encoder.identity, bytes);
            uuids.push(uuid);
            count.raw++;
            count.imageBytes += bytes.length;
            return { type: 'image_url', image_url: { url: `data:${mimeOf(bytes)};base64,${base64(bytes)}` }, uuid };
          }
          const e = await input.encoder.embeddings(bytes);
          uuids.push(e.key);
          count.embeds++;
          // A Qwen-VL image's patch grid: tessera.grid_thw beside a uuid alone, else vLLM's dictionary.
          const grid = e.gridThw ? { grid_thw: e.gridThw } : { grid: e.grid };
          if (input.known.has(e.key)) {
            count.byUuid++;
            return { type: 'image_embeds', image_embeds: null, uuid: e.key, tessera: grid };
          }
          const rows = base64(encodeTorchTensor(e.data, e.shape, input.dtype));
          if (e.gridThw) {
            const thw = base64(encodeTorchTensor(Float32Array.from(e.gridThw), [1, 3], 'int64'));
            return { type: 'image_embeds', image_embeds: { image_embeds: rows, image_grid_thw: thw }, uuid: e.key };
          }
          return { type: 'image_embeds', image_embeds: rows, uuid: e.key, tessera: grid };
        }),
      );
      return { ...m, content };
    }),
  );
  return { messages, uuids, count };
}
