// Browser globals that Tessera's public declarations name (WebGPU objects, picked files and folders, the
// Cache API), declared as empty interfaces. With lib.dom (or @webgpu/types) they merge into the real ones
// and change nothing; in a Node project without lib.dom they let the declarations type-check, the objects
// then being opaque (a Node program passes them through, it does not build them). The consumer test
// type-checks such a project; a public type naming another browser global fails it until it is added here.

declare global {
  interface GPUAdapter {}
  interface GPUBindGroup {}
  interface GPUBuffer {}
  interface GPUBufferBinding {}
  interface GPUBufferDescriptor {}
  interface GPUCommandEncoder {}
  interface GPUComputePassEncoder {}
  interface GPUComputePipeline {}
  interface GPUDevice {}
  interface GPUSupportedLimits {}
  interface FileList {}
  interface FileSystemDirectoryHandle {}
  interface CacheStorage {}
}

export {};
