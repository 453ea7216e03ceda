// Raw GPUBuffer helpers for the peer side, which runs on onnxruntime-web's own GPUDevice and so cannot
// use our GpuContext (its buffer pool belongs to another device).

import { MapMode, READBACK_USAGE, STORAGE_USAGE } from '../../src/gpu/flags';

/** A storage buffer on `device` holding `data` (usable by ORT: STORAGE | COPY_SRC | COPY_DST). */
export function uploadBuffer(device: GPUDevice, data: Float32Array, label: string): GPUBuffer {
  const buffer = device.createBuffer({ label, size: data.byteLength, usage: STORAGE_USAGE });
  device.queue.writeBuffer(buffer, 0, data.buffer, data.byteOffset, data.byteLength);
  return buffer;
}

export function emptyBuffer(device: GPUDevice, numFloats: number, label: string): GPUBuffer {
  return device.createBuffer({ label, size: numFloats * 4, usage: STORAGE_USAGE });
}

/** Copy `numFloats` f32 values from `buffer` back to the host. */
export async function readFloats(device: GPUDevice, buffer: GPUBuffer, numFloats: number): Promise<Float32Array> {
  const size = numFloats * 4;
  const staging = device.createBuffer({ label: 'bench.readback', size, usage: READBACK_USAGE });
  try {
    const encoder = device.createCommandEncoder({ label: 'bench.readback' });
    encoder.copyBufferToBuffer(buffer, 0, staging, 0, size);
    device.queue.submit([encoder.finish()]);
    await staging.mapAsync(MapMode.READ, 0, size);
    const out = new Float32Array(numFloats);
    out.set(new Float32Array(staging.getMappedRange(0, size)));
    staging.unmap();
    return out;
  } finally {
    staging.destroy();
  }
}
