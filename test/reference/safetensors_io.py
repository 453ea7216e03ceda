"""Minimal safetensors reader (no `safetensors` package here).

Format: 8-byte little-endian u64 header length N, then N bytes of JSON header
{name: {dtype, shape, data_offsets: [begin, end]}, "__metadata__": {...}}, then the raw tensor bytes
(offsets are relative to the end of the header). Handles BF16 (u16 << 16 -> f32 bits), F16
(numpy float16) and F32, and sharded checkpoints via model.safetensors.index.json.
Values are widened exactly (bf16/f16 -> f32 -> f64 are exact), so callers may compute in f32 or f64.
"""

import hashlib
import json
import os
import struct

import numpy as np
import torch


def read_header(path):
    with open(path, 'rb') as f:
        n = struct.unpack('<Q', f.read(8))[0]
        header = json.loads(f.read(n).decode('utf-8'))
    return header, 8 + n


def _decode(raw, dtype, shape):
    if dtype == 'BF16':
        u16 = np.frombuffer(raw, dtype='<u2')
        arr = (u16.astype(np.uint32) << 16).view(np.float32)
    elif dtype == 'F16':
        arr = np.frombuffer(raw, dtype='<f2').astype(np.float32)
    elif dtype == 'F32':
        arr = np.frombuffer(raw, dtype='<f4').astype(np.float32)
    else:
        raise ValueError(f'unsupported safetensors dtype {dtype}')
    n = int(np.prod(shape)) if shape else 1
    if arr.size != n:
        raise ValueError(f'tensor size mismatch: {arr.size} values for shape {shape}')
    return arr.reshape(shape)


def load_file(path):
    """All tensors of one .safetensors file -> {name: torch.float32 tensor}, plus the file's dtype set."""
    header, data_start = read_header(path)
    with open(path, 'rb') as f:
        blob = f.read()
    out, dtypes = {}, set()
    for name, info in header.items():
        if name == '__metadata__':
            continue
        b, e = info['data_offsets']
        arr = _decode(blob[data_start + b:data_start + e], info['dtype'], info['shape'])
        out[name] = torch.from_numpy(arr.copy())
        dtypes.add(info['dtype'])
    return out, dtypes


def load_checkpoint(model_dir):
    """Tensors of a model directory: model.safetensors, or the shards listed in model.safetensors.index.json.

    Returns (tensors, files, dtypes) where files are the shard file names read.
    """
    index = os.path.join(model_dir, 'model.safetensors.index.json')
    if os.path.exists(index):
        with open(index) as f:
            weight_map = json.load(f)['weight_map']
        files = sorted(set(weight_map.values()))
    else:
        weight_map, files = None, ['model.safetensors']
    tensors, dtypes = {}, set()
    for fn in files:
        t, d = load_file(os.path.join(model_dir, fn))
        for k in t:
            if k in tensors:
                raise ValueError(f'tensor {k} appears in more than one shard')
            if weight_map is not None and weight_map.get(k) != fn:
                raise ValueError(f'tensor {k} found in {fn}, index says {weight_map.get(k)}')
        tensors.update(t)
        dtypes |= d
    if weight_map is not None and set(weight_map) != set(tensors):
        raise ValueError('index weight_map and shard contents differ')
    return tensors, files, dtypes


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, 'rb') as f:
        for chunk in iter(lambda: f.read(1 << 20), b''):
            h.update(chunk)
    return h.hexdigest()
