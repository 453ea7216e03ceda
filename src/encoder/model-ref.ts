// Model references for encoder workers: how the main thread names its checkpoint so a worker can open it
// (a URL, picked files, a directory handle: all structured-cloneable, or a GGUF pair in one of them), and
// back to a ModelSource.

import { InternalError } from '../errors';
import { DirectoryHandleSource, FileListSource, UrlSource, type ModelSource } from '../io/model-source';
import type { FolderRef, ModelRef } from '../protocol/encoder';

/** The GGUF reader loads with the first GGUF pair (a worker for safetensors checkpoints never needs it). */
async function openGguf(folder: FolderRef, model: string, mmproj: string | undefined): Promise<ModelSource> {
  const { openGgufCheckpoint } = await import('../families/gguf-checkpoint');
  return openGgufCheckpoint(folderSource(folder), { model, mmproj });
}

function folderSource(ref: FolderRef): ModelSource {
  switch (ref.kind) {
    case 'url':
      return new UrlSource(ref.url, { files: ref.files, storeDownloads: ref.storeDownloads });
    case 'files':
      return new FileListSource(ref.files);
    case 'directory-handle':
      return new DirectoryHandleSource(ref.handle);
    case 'dir':
      throw new InternalError(`a browser encoder worker cannot read the local folder ${ref.path}; pass a URL or files`);
  }
}

export function browserModelSourceFromRef(ref: ModelRef): ModelSource | Promise<ModelSource> {
  // A GGUF pair's headers are read again here (range requests, or the stored files): a few MiB.
  if (ref.kind === 'gguf') return openGguf(ref.folder, ref.model, ref.mmproj);
  return folderSource(ref);
}
