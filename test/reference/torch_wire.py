"""The torch wire format of image_embeds, checked with PyTorch itself (Debian's python3-torch).

Run from the repository root after `npx tsx test/reference/make-torch-wire.ts` (npm run goldens does both):
    /usr/bin/python3 test/reference/torch_wire.py

1. Loads every ts-<name>.pt Tessera wrote with torch.load(weights_only=True), as vLLM loads image_embeds,
   and compares it with the case's formula (exactly: the same rounding torch's .half() / .bfloat16() does).
   The sha256 of each file it accepted goes into verified.json: the unit test checks Tessera still writes
   exactly those bytes.
2. Writes torch-<name>.pt with torch.save (one of them a view with a storage offset) and expected.json
   (shape, dtype, where its values start in the formula's sequence), for the unit test to decode.
"""

import hashlib
import json
import math
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "fixtures", "torch-wire")
# where make-torch-wire.ts writes Tessera's files (not committed: the unit test encodes them again)
TS_OUT = os.path.join(HERE, "..", "..", ".cache", "torch-wire")

# the cases of torch-wire-cases.ts
CASES = [
    ("f32-tiles", [2, 64, 24], torch.float32),
    ("f32-rows", [64, 576], torch.float32),
    ("f16-tiles", [5, 64, 24], torch.float16),
    ("bf16-rows", [3, 7], torch.bfloat16),
    ("i64-grids", [4, 3], torch.int64),
]


def values(shape, dtype=torch.float32):
    n = math.prod(shape)
    if dtype == torch.int64:
        return torch.tensor([(i * 7919) % 20011 - 10000 for i in range(n)], dtype=torch.int64).reshape(shape)
    return torch.tensor([math.sin(i * 0.37) * 3 + i / 1000 for i in range(n)], dtype=torch.float64).to(torch.float32).reshape(shape)


def main():
    verified = {}
    for name, shape, dtype in CASES:
        path = os.path.join(TS_OUT, f"ts-{name}.pt")
        with open(path, "rb") as f:
            raw = f.read()
        t = torch.load(path, weights_only=True)
        want = values(shape, dtype).to(dtype)
        assert t.dtype == dtype, f"{name}: dtype {t.dtype}, want {dtype}"
        assert list(t.shape) == shape, f"{name}: shape {list(t.shape)}, want {shape}"
        assert t.is_contiguous(), f"{name}: not contiguous"
        assert torch.equal(t, want), f"{name}: values differ, max {float((t.double() - want.double()).abs().max())}"
        verified[f"ts-{name}.pt"] = {"sha256": hashlib.sha256(raw).hexdigest(), "dtype": str(dtype), "shape": shape}
        print(f"ok  torch.load(ts-{name}.pt, weights_only=True): {dtype} {shape}")

    expected = {}
    base = values([6, 64, 24])
    tile = 64 * 24
    # name: (tensor, index of its first value in the formula's sequence)
    written = {
        "torch-f32": (base[0:2].contiguous(), 0),
        "torch-f16": (base[0:3].to(torch.float16), 0),
        # a view: its storage holds all 6 tiles and the tensor starts at tile 2
        "torch-bf16-view": (base.to(torch.bfloat16)[2:5], 2 * tile),
        "torch-f32-2d": (base.reshape(-1, 24)[:64].clone(), 0),
    }
    # a Qwen-VL image's image_grid_thw, as vLLM's clients save it
    grid = torch.tensor([[1, 32, 46]], dtype=torch.int64)
    torch.save(grid, os.path.join(OUT, "torch-i64-grid.pt"))
    expected["torch-i64-grid"] = {"shape": list(grid.shape), "dtype": "int64", "values": grid.flatten().tolist()}
    print(f"wrote torch-i64-grid.pt: {grid.dtype} {list(grid.shape)}")
    for name, (t, start) in written.items():
        torch.save(t, os.path.join(OUT, f"{name}.pt"))
        want = values([6 * tile]).to(t.dtype)[start : start + t.numel()].reshape(t.shape)
        assert torch.equal(t, want)
        expected[name] = {"shape": list(t.shape), "dtype": str(t.dtype).replace("torch.", ""), "start": start}
        print(f"wrote {name}.pt: {t.dtype} {list(t.shape)}")

    with open(os.path.join(OUT, "verified.json"), "w") as f:
        json.dump({"torch": torch.__version__, "python": sys.version.split()[0], "files": verified}, f, indent=1)
        f.write("\n")
    with open(os.path.join(OUT, "expected.json"), "w") as f:
        json.dump({"torch": torch.__version__, "tensors": expected}, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
