// createEngine for Node: WebGPU from Dawn (SwiftShader when there is no GPU), images decoded by sharp,
// weights from a local checkpoint directory or an http(s) URL base.

import { createNodeGpuContext, type NodeGpuOptions } from '../gpu/node';
import { UrlSource, type ModelSource } from '../io/model-source';
import { NodeDirSource } from '../io/model-source-node';
import { decodeImageNode } from '../processor/image-decode-node';
import { Engine, type EngineOptions } from './engine';

export function nodeModelSource(model: string | ModelSource): ModelSource {
  if (typeof model !== 'string') return model;
  return /^https?:\/\//.test(model) ? new UrlSource(model, { useCache: false }) : new NodeDirSource(model);
}

export async function createEngine(options: EngineOptions & { model: string | ModelSource; gpu?: NodeGpuOptions }): Promise<Engine> {
  const gpu = await createNodeGpuContext(options.gpu);
  try {
    return await Engine.create({ gpu, source: nodeModelSource(options.model), decodeImage: decodeImageNode, ownsGpu: true }, options);
  } catch (e) {
    gpu.destroy();
    throw e;
  }
}
