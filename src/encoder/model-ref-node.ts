// Model references for encoder worker threads in Node: a folder or a URL.

import { InternalError } from '../errors';
import { UrlSource, type ModelSource } from '../io/model-source';
import { NodeDirSource } from '../io/model-source-node';
import type { ModelRef } from '../protocol/encoder';

export function nodeModelSourceFromRef(ref: ModelRef): ModelSource {
  if (ref.kind === 'dir') return new NodeDirSource(ref.path);
  if (ref.kind === 'url') return new UrlSource(ref.url, { useCache: false });
  throw new InternalError(`a Node encoder worker cannot open a '${ref.kind}' model reference; pass a folder or a URL`);
}
