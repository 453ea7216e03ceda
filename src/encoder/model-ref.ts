// Model references for encoder workers: how the main thread names its checkpoint so a worker can open it
// (a URL, picked files, a directory handle: all structured-cloneable), and back to a ModelSource.

import { InternalError } from '../errors';
import { DirectoryHandleSource, FileListSource, UrlSource, type ModelSource } from '../io/model-source';
import type { ModelRef } from '../protocol/encoder';

export function browserModelSourceFromRef(ref: ModelRef): ModelSource {
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
