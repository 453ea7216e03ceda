// Writes a graph built with onnx-graph.ts to a folder: the .onnx file, and with external data its data
// files beside it (written part by part: a 2 GB file is never one buffer in memory).

import { closeSync, mkdirSync, openSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { GraphBuilder } from './onnx-graph';

export interface WrittenOnnx {
  /** The .onnx file's bytes and each data file's, by name. */
  bytes: Record<string, number>;
}

/**
 * `dir/fileName`, with every initializer of 1 KiB or more in `dir/fileName_data`, `_data_1`, ... of at most
 * `maxFileBytes` each (onnx-graph.ts encodeExternal), or inline when `external` is false.
 */
export function writeOnnx(
  dir: string,
  fileName: string,
  graph: GraphBuilder,
  options: { external: boolean; maxFileBytes?: number },
): WrittenOnnx {
  mkdirSync(dir, { recursive: true });
  if (!options.external) {
    const model = graph.encode();
    writeFileSync(join(dir, fileName), model);
    return { bytes: { [fileName]: model.byteLength } };
  }
  const { model, files } = graph.encodeExternal(fileName, { maxFileBytes: options.maxFileBytes });
  const bytes: Record<string, number> = { [fileName]: model.byteLength };
  for (const file of files) {
    const fd = openSync(join(dir, file.name), 'w');
    try {
      for (const part of file.parts) {
        for (let at = 0; at < part.byteLength; ) at += writeSync(fd, part, at, part.byteLength - at);
      }
    } finally {
      closeSync(fd);
    }
    bytes[file.name] = file.bytes;
  }
  writeFileSync(join(dir, fileName), model);
  return { bytes };
}
