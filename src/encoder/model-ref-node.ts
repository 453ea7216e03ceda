// Model references for encoder worker threads in Node: a folder, a URL, or a GGUF pair in a folder.

import { InternalError } from '../errors';
import { UrlSource, type ModelSource } from '../io/model-source';
import { NodeDirSource } from '../io/model-source-node';
import type { FolderRef, ModelRef } from '../protocol/encoder';

/** The GGUF reader loads with the first GGUF pair (a worker for safetensors checkpoints never needs it). */
async function openGguf(folder: FolderRef, model: string, mmproj: string | undefined): Promise<ModelSource> {
  const { openGgufCheckpoint } = await import('../families/gguf-checkpoint');
  return openGgufCheckpoint(folderSource(folder), { model, mmproj });
}

function folderSource(ref: FolderRef): ModelSource {
  if (ref.kind === 'dir') return new NodeDirSource(ref.path);
  if (ref.kind === 'url') return new UrlSource(ref.url, { useCache: false });
  throw new InternalError(`a Node encoder worker cannot open a '${ref.kind}' model reference; pass a folder or a URL`);
}

export function nodeModelSourceFromRef(ref: ModelRef): ModelSource | Promise<ModelSource> {
  if (ref.kind === 'gguf') return openGguf(ref.folder, ref.model, ref.mmproj);
  return folderSource(ref);
}
