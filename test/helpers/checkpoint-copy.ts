// A copy of a single-file safetensors checkpoint with some tensors' values replaced (stored as F32), for
// tests that compare another form of the same weights with a reference made of their exact values.

import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { streamSafetensors, toFloat32 } from '../../src/model/weights/safetensors';
import { type TensorToWrite, writeSafetensors } from '../../src/model/weights/safetensors-writer';

/** Copies `dir` to `out` with `values` (by tensor name) in place of those tensors; returns `out`. */
export async function copyCheckpointWith(dir: string, out: string, values: ReadonlyMap<string, Float32Array>): Promise<string> {
  cpSync(dir, out, { recursive: true });
  const tensors: TensorToWrite[] = [];
  for await (const { info, bytes } of streamSafetensors(
    once(new Uint8Array(readFileSync(join(dir, 'model.safetensors')))),
    'model.safetensors',
  )) {
    const replaced = values.get(info.name);
    tensors.push({
      name: info.name,
      dtype: replaced ? 'F32' : info.dtype === 'BF16' ? 'BF16' : info.dtype === 'F16' ? 'F16' : 'F32',
      shape: info.shape,
      data: replaced ?? toFloat32(info, bytes),
    });
  }
  writeFileSync(join(out, 'model.safetensors'), writeSafetensors(tensors));
  return out;
}

async function* once(bytes: Uint8Array) {
  yield bytes;
}
