// Tessera's public API for browsers and workers. Node users import 'tessera/node' for a Dawn device.

export * from './errors';
export { GpuContext, type GpuContextOptions } from './gpu/context';
export { createBrowserGpuContext } from './gpu/browser';
export { describeAdapter, adapterName, type AdapterReport, type KernelVariant } from './gpu/adapter-info';
export type { Tensor, DType } from './gpu/tensor';
export { BufferPool, type BufferPoolStats } from './gpu/buffer-pool';
export { PipelineCache, type PipelineSpec } from './gpu/pipeline-cache';
export { submitDispatches, type Dispatch } from './kernels/dispatch';
export * as kernels from './kernels/index';
export { defaultKernelCases } from './selfcheck/default-cases';
export { runCase, runCases, type CaseResult } from './selfcheck/runner';
export { formatAdapterReport, formatCaseLine, formatSummary } from './selfcheck/report';
export { Engine, type EngineOptions } from './engine/engine';
export type { DeviceChoice, EngineModel } from './engine/engine-model';
export type { DeviceOption } from './engine/choose-device';
export { createEngine, browserModelSource, type BrowserModelInput, type BrowserEngineOptions } from './engine/create-browser';
export type { EncoderOptions } from './engine/encoder-options';
export type * from './engine/types';
export type { MediaOptions } from './engine/intake/media-options';
export { UrlSource, FileListSource, DirectoryHandleSource, MemorySource, type ModelSource } from './io/model-source';
export type { StorageCheck, StorageOptions } from './storage/check-storage';
export type { PlannedFile } from './storage/download-plan';
export type { StorageManagerLike } from './storage/quota';
export {
  inspectStorage,
  deleteStoredModel,
  clearStorage,
  type StorageEnv,
  type StorageReport,
  type StoredModel,
  type DeletedEntries,
} from './storage/stored-data';
export * as processor from './processor/index';
export { createRemoteEngine, type BrowserRemoteEngineOptions } from './remote/create-remote-browser';
export { RemoteEngine, type RemoteEngineOptions, type RemoteEngineStats } from './remote/remote-engine';
