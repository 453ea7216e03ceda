// comlink ships its Node adapter as dist/esm/node-adapter.mjs with types in node-adapter.d.ts, which
// TypeScript does not pair up for the .mjs specifier. Same shapes as upstream's declaration.
declare module 'comlink/dist/esm/node-adapter.mjs' {
  import type { Endpoint } from 'comlink';
  export interface NodeEndpoint {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    postMessage(message: any, transfer?: any[]): void;
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    on(type: string, listener: (value: any) => void): void;
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    off(type: string, listener: (value: any) => void): void;
    start?: () => void;
  }
  export default function nodeEndpoint(nep: NodeEndpoint): Endpoint;
}
