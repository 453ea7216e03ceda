// WebGPU flag values, fixed by the spec (https://www.w3.org/TR/webgpu/#buffer-usage). Spelled out here so
// no module depends on the GPUBufferUsage / GPUMapMode globals, which Dawn's Node binding does not install.

export const BufferUsage = {
  MAP_READ: 0x0001,
  MAP_WRITE: 0x0002,
  COPY_SRC: 0x0004,
  COPY_DST: 0x0008,
  INDEX: 0x0010,
  VERTEX: 0x0020,
  UNIFORM: 0x0040,
  STORAGE: 0x0080,
  INDIRECT: 0x0100,
  QUERY_RESOLVE: 0x0200,
} as const;

export const MapMode = { READ: 0x0001, WRITE: 0x0002 } as const;

export const STORAGE_USAGE = BufferUsage.STORAGE | BufferUsage.COPY_SRC | BufferUsage.COPY_DST;
export const UNIFORM_USAGE = BufferUsage.UNIFORM | BufferUsage.COPY_DST;
export const READBACK_USAGE = BufferUsage.MAP_READ | BufferUsage.COPY_DST;
