"""Reference of the Qwen-VL video processors' counts -> test/fixtures/goldens/qwen-video-sampling.json.

Written from HF transformers 4.57's Qwen2VLVideoProcessor.sample_frames (called with fps, as
Qwen2.5-VL's processor is when a caller asks for frames per second), Qwen3VLVideoProcessor.sample_frames,
Qwen3-VL's video smart_resize (frames x height x width within the budget), Qwen3VLProcessor's
_calculate_timestamps and its f"<{t:.1f} seconds>" text, with numpy's and torch's own arithmetic.

    /usr/bin/python3 test/reference/qwen_video_sampling.py
"""
import json
import math
import os

import numpy as np
import torch

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), '..', '..'))
OUT = os.path.join(ROOT, 'test', 'fixtures', 'goldens', 'qwen-video-sampling.json')


def qwen2_sample(total, video_fps, fps=2, min_frames=4, max_frames=768, temporal=2):
    max_frames = math.floor(min(max_frames, total) / temporal) * temporal
    n = total / video_fps * fps
    n = min(min(max(n, min_frames), max_frames), total)
    n = math.floor(n / temporal) * temporal
    idx = torch.arange(0, total, total / n).int().tolist()
    return idx[:n]


def qwen3_sample(total, video_fps, fps=2, min_frames=4, max_frames=768):
    n = int(total / video_fps * fps)
    n = min(min(max(n, min_frames), max_frames), total)
    return np.linspace(0, total - 1, n).round().astype(int).tolist()


def qwen3_resize(num_frames, height, width, factor=32, temporal=2, min_pixels=4096, max_pixels=25165824):
    h_bar = round(height / factor) * factor
    w_bar = round(width / factor) * factor
    t_bar = round(num_frames / temporal) * temporal
    if t_bar * h_bar * w_bar > max_pixels:
        beta = math.sqrt((num_frames * height * width) / max_pixels)
        h_bar = max(factor, math.floor(height / beta / factor) * factor)
        w_bar = max(factor, math.floor(width / beta / factor) * factor)
    elif t_bar * h_bar * w_bar < min_pixels:
        beta = math.sqrt(min_pixels / (num_frames * height * width))
        h_bar = math.ceil(height * beta / factor) * factor
        w_bar = math.ceil(width * beta / factor) * factor
    return [h_bar, w_bar]


def timestamps(indices, video_fps, merge=2):
    indices = list(indices)
    if len(indices) % merge != 0:
        indices.extend(indices[-1] for _ in range(merge - len(indices) % merge))
    ts = [i / video_fps for i in indices]
    return [(ts[i] + ts[i + merge - 1]) / 2 for i in range(0, len(ts), merge)]


def main():
    clips = [(20, 5), (120, 30), (300, 30), (17, 24), (75, 25), (9, 24), (3, 30), (1000, 29.97), (48, 24), (250, 12.5), (10, 4)]
    sampling = []
    for total, fps in clips:
        q3 = qwen3_sample(total, fps)
        sampling.append({'total': total, 'fps': fps, 'qwen2': qwen2_sample(total, fps), 'qwen3': q3,
                         'qwen3Timestamps': timestamps(q3, fps), 'qwen3Text': [f'<{t:.1f} seconds>' for t in timestamps(q3, fps)]})
    sizes = [(20, 720, 1280), (600, 720, 1280), (4, 90, 120), (2, 33, 700), (768, 1080, 1920), (8, 480, 640), (3, 64, 64)]
    resize = [{'frames': t, 'height': h, 'width': w, 'small': qwen3_resize(t, h, w, min_pixels=4096, max_pixels=200000),
               'real': qwen3_resize(t, h, w)} for t, h, w in sizes]
    fixed = [0.25, 0.75, 1.25, 2.25, 0.35, 0.05, 1.05, 0.15, 12.45, 3.0, 0.125, 1 / 3]
    with open(OUT, 'w') as f:
        json.dump({'about': 'test/reference/qwen_video_sampling.py', 'sampling': sampling, 'resize': resize,
                   'fixed1': [{'x': x, 'text': f'{x:.1f}'} for x in fixed]}, f)
        f.write('\n')
    print(f'-> {os.path.relpath(OUT, ROOT)}')


if __name__ == '__main__':
    main()
