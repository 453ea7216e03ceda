// Tessera's entry point for Node: everything in the browser API plus a Dawn-backed GPU device.

export * from './index';
export { createNodeGpuContext, findSwiftShaderIcd, type NodeGpuOptions } from './gpu/node';
