"""Reference order of the Qwen2-VL-style patch rows (HF Qwen2VLImageProcessor._preprocess's reshape and
permute, written from its rules, not copied) -> test/fixtures/goldens/qwen-patches.json.

The input frames hold their own flat index (frame, channel, y, x), so each output value names the input value
it came from. The frames [F, C, H, W] are grouped T at a time and viewed as
[F/T, T, C, gh/m, m, P, gw/m, m, P]; rows run over (frame group, block row, block column, row in block, column
in block), and each row over (channel, frame in group, y, x).

Run: /usr/bin/python3 test/reference/qwen_patches.py
"""
import json
import os

import torch

OUT = os.path.join(os.path.dirname(__file__), '..', 'fixtures', 'goldens', 'qwen-patches.json')


def patch_rows(frames, P, T, m):
    F, C, H, W = frames.shape
    gh, gw = H // P, W // P
    x = frames.reshape(F // T, T, C, gh // m, m, P, gw // m, m, P)
    # (group, block row, block column, row in block, column in block, channel, frame, y, x)
    x = x.permute(0, 3, 6, 4, 7, 2, 1, 5, 8)
    return x.reshape((F // T) * gh * gw, C * T * P * P)


CASES = [
    # name, frames, channels, patch, temporal, merge, gh, gw
    ('video-2-frames', 2, 3, 2, 2, 2, 4, 6),
    ('video-4-frames-merge-1', 4, 2, 3, 2, 1, 2, 3),
    ('image-patch-14', 1, 3, 14, 2, 2, 2, 4),
]


def main():
    cases = []
    for name, F, C, P, T, m, gh, gw in CASES:
        H, W = gh * P, gw * P
        frames = torch.arange(F * C * H * W, dtype=torch.float64).reshape(F, C, H, W)
        if F < T:  # an image: its one frame repeated to the temporal patch
            frames = frames.expand(T, C, H, W)
        rows = patch_rows(frames, P, T, m)
        cases.append({'name': name, 'frames': F, 'channels': C, 'patchSize': P, 'temporalPatchSize': T,
                      'mergeSize': m, 'grid': {'h': gh, 'w': gw}, 'shape': list(rows.shape),
                      'source': [int(v) for v in rows.flatten().tolist()]})
    with open(OUT, 'w') as f:
        json.dump({'about': 'test/reference/qwen_patches.py', 'cases': cases}, f)
        f.write('\n')
    print(f'{len(cases)} cases -> {os.path.relpath(OUT)}')


if __name__ == '__main__':
    main()
