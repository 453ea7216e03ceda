"""torchvision's bicubic antialiased resize of uint8 RGB images -> test/fixtures/goldens/qwen-resize.json.

HF's Qwen2VLImageProcessorFast (which transformers and vLLM load for Qwen2.5-VL and Qwen3-VL) resizes
each image to its smart_resize size with torchvision's resize(BICUBIC, antialias=True) on the uint8
tensor: torchvision widens it to float32, interpolates, clamps to [0, 255] and rounds. This script runs
torchvision itself on deterministic images (smooth gradients with seeded noise and hard edges) shrunk,
enlarged and both at once, and stores the inputs and outputs for src/processor/resample-torch.ts.

Needs Debian's python3-torchvision (apt install python3-torchvision); torch 1.13 / torchvision 0.14 run
the same float32 path for bicubic as later versions (uint8-native kernels exist only for bilinear).

    /usr/bin/python3 test/reference/qwen_resize.py
"""
import base64
import json
import os

import torch
import torchvision
from torchvision.transforms import InterpolationMode
from torchvision.transforms import functional as F

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))
OUT = os.path.join(ROOT, 'test', 'fixtures', 'goldens', 'qwen-resize.json')

CASES = [
    # name, (height, width) in, (height, width) out
    ('shrink both sides by non-integer factors', (97, 131), (56, 84)),
    ('enlarge both sides (an image under min_pixels)', (21, 30), (56, 84)),
    ('shrink one side, enlarge the other', (40, 150), (56, 112)),
    ('tall and narrow', (180, 17), (112, 28)),
    ('shrink by exactly 2', (112, 168), (56, 84)),
    ('same size (identity)', (28, 56), (28, 56)),
]


def image(h, w, seed):
    g = torch.Generator().manual_seed(seed)
    y = torch.linspace(0, 1, h)[:, None]
    x = torch.linspace(0, 1, w)[None, :]
    base = torch.stack([255 * x * y, 255 * (1 - x) * y, 255 * (0.5 + 0.5 * torch.sin(9 * x + 5 * y))])
    noise = torch.randint(-40, 41, (3, h, w), generator=g).float()
    img = base + noise
    img[:, h // 3:h // 2, w // 4:w // 2] = torch.tensor([250.0, 10.0, 128.0])[:, None, None]  # hard edges
    return img.clamp(0, 255).round().to(torch.uint8)


def hwc_b64(t):
    return base64.b64encode(t.permute(1, 2, 0).contiguous().numpy().tobytes()).decode()


def main():
    cases = []
    for k, (name, (h, w), (oh, ow)) in enumerate(CASES):
        src = image(h, w, 100 + k)
        out = F.resize(src, [oh, ow], interpolation=InterpolationMode.BICUBIC, antialias=True)
        cases.append({'name': name, 'width': w, 'height': h, 'outWidth': ow, 'outHeight': oh,
                      'input': hwc_b64(src), 'output': hwc_b64(out)})
        print(f'{name}: {w}x{h} -> {ow}x{oh}')
    with open(OUT, 'w') as f:
        json.dump({'about': 'test/reference/qwen_resize.py', 'torch': torch.__version__,
                   'torchvision': torchvision.__version__, 'cases': cases}, f)
        f.write('\n')
    print(f'-> {os.path.relpath(OUT, ROOT)}')


if __name__ == '__main__':
    main()
