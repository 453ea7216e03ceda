// Tessera's entry point for Node: the browser API plus Dawn-backed GPU devices, sharp image decoding and
// local checkpoint directories. `createEngine` here replaces the browser one.

export * from './index';
export { createEngine, nodeModelSource, type NodeEngineOptions, type NodeEncoderOptions } from './engine/create-node';
export { createNodeGpuContext, DAWN_EXACT_TIMESTAMPS, findSwiftShaderIcd, type NodeGpuOptions } from './gpu/node';
export { NodeDirSource } from './io/model-source-node';
export { inspectWeightCache, clearWeightCache, type WeightCacheReport } from './storage/stored-node';
export { decodeImageNode, loadProcessorFromDirectory } from './processor/node';
export { startServer, type RunningServer, type ServeOptions } from './server/listen-node';
export { createRemoteEngine, type NodeRemoteEngineOptions } from './remote/create-remote-node';
