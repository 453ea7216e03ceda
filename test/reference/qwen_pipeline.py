"""Float64 reference of a whole Qwen-VL request on the tiny checkpoints -> test/fixtures/goldens/qwen-pipeline.json.

Each request of test/fixtures/goldens/qwen-pipeline-input.json (make-qwen-input.ts: images of several sizes
and aspect ratios, under and over the pixel budget, and two in one message) runs on each checkpoint. Each
image (decoded by Pillow) is preprocessed as HF's Qwen2VLImageProcessorFast does:
torchvision's bicubic antialiased resize to the grid of the prompt file (checked against smart_resize's),
the fused rescale + normalise in float32 ((x - mean*255) / (std*255)), the frame repeated to the temporal
patch and cut into patch rows (qwen_patches.patch_rows). The tower (qwen_vision.py) gives each image's rows
(and Qwen3-VL's DeepStack levels), one image at a time as HF's tower runs them; the decoder (qwen_decoder.py) runs greedy from the prompt ids of
test/fixtures/goldens/qwen-pipeline-input.json (make-qwen-input.ts) with the M-RoPE positions of
mrope_positions.py.

    npx tsx test/reference/make-qwen-input.ts && /usr/bin/python3 test/reference/qwen_pipeline.py
"""
import json
import os

import numpy
import torch
from PIL import Image
from torchvision.transforms import InterpolationMode
from torchvision.transforms import functional as F

import mrope_positions
import qwen_decoder
import qwen_patches
import qwen_smart_resize
import qwen_video_sampling
import qwen_vision
import safetensors_io

ROOT = qwen_decoder.ROOT
INPUT = os.path.join(ROOT, 'test', 'fixtures', 'goldens', 'qwen-pipeline-input.json')
OUT = os.path.join(ROOT, 'test', 'fixtures', 'goldens', 'qwen-pipeline.json')
F64, F32 = torch.float64, torch.float32


def load_rgb(path):
    return torch.from_numpy(numpy.array(Image.open(path).convert('RGB'))).permute(2, 0, 1).contiguous()


def budget(pre):
    size = pre.get('size') or {}
    return pre.get('min_pixels') or size.get('shortest_edge'), pre.get('max_pixels') or size.get('longest_edge')


def resize_normalize(img, pre, h, w):
    """torchvision's bicubic antialiased resize of uint8 pixels, then the fused rescale + normalise in float32."""
    x = F.resize(img, [h, w], interpolation=InterpolationMode.BICUBIC, antialias=True).to(F32)
    mean = torch.tensor(pre['image_mean'], dtype=F32) * (1.0 / pre.get('rescale_factor', 1 / 255))
    std = torch.tensor(pre['image_std'], dtype=F32) * (1.0 / pre.get('rescale_factor', 1 / 255))
    return (x - mean[:, None, None]) / std[:, None, None]


def preprocess(path, pre, grid):
    img = load_rgb(path)
    P, m, T = pre['patch_size'], pre['merge_size'], pre['temporal_patch_size']
    lo, hi = budget(pre)
    h, w = qwen_smart_resize.smart_resize(img.shape[1], img.shape[2], P * m, lo, hi)
    if (h // P, w // P) != (grid['h'], grid['w']):
        raise ValueError(f'smart_resize gives {h} x {w}, the prompt file a grid of {grid}')
    frames = resize_normalize(img, pre, h, w)[None].repeat(T, 1, 1, 1)
    return qwen_patches.patch_rows(frames, P, T, m)


def preprocess_video(paths, pre, vpre, qwen3, group):
    """A video given as frames: one size for all (Qwen2.5-VL: each frame's smart resize within the image budget,
    as HF's video processor falls back to preprocessor_config.json; Qwen3-VL: frames x height x width within
    video_preprocessor_config.json's budget), the last frame repeated to fill the temporal patch."""
    imgs = [load_rgb(p) for p in paths]
    P, m, T = pre['patch_size'], pre['merge_size'], pre['temporal_patch_size']
    H, W = imgs[0].shape[1], imgs[0].shape[2]
    if qwen3:
        size = (vpre or {}).get('size') or {}
        h, w = qwen_video_sampling.qwen3_resize(len(imgs), H, W, P * m, T, size['shortest_edge'], size['longest_edge'])
    else:
        lo, hi = budget(pre)
        h, w = qwen_smart_resize.smart_resize(H, W, P * m, lo, hi)
    if (h // P, w // P) != (group['h'], group['w']):
        raise ValueError(f'the video resize gives {h} x {w}, the prompt file a frame group of {group}')
    frames = [resize_normalize(img, pre, h, w) for img in imgs]
    while len(frames) % T:
        frames.append(frames[-1])
    return qwen_patches.patch_rows(torch.stack(frames), P, T, m), len(frames) // T


def run_case(W, raw, pre, vpre, c, name, spec, entry):
    """One request: each image (and video, whole) preprocessed and through the tower, then greedy decoding at f64 and f32."""
    vc = raw['vision_config']
    # The media in prompt order (the message's parts): (patch rows, tower grid).
    media, grids, video_grids, seconds = [], [], [], []
    images = iter(entry['grids'])
    videos = iter(entry.get('videos', []))
    for part in spec['content']:
        if 'image' in part:
            g = next(images)
            grids.append((g['t'], g['h'], g['w']))
            media.append((preprocess(os.path.join(ROOT, part['image']), pre, g).to(F64), grids[-1]))
        elif 'video' in part:
            v = next(videos)
            paths = [os.path.join(ROOT, f) for f in part['video']['frames']]
            x, groups = preprocess_video(paths, pre, vpre, c.qwen3, v['group'])
            if groups != len(v['timestamps']):
                raise ValueError(f'{groups} frame groups, the prompt file {len(v["timestamps"])}')
            gh, gw = v['group']['h'], v['group']['w']
            media.append((x.to(F64), (groups, gh, gw)))
            if c.qwen3:
                # Qwen3-VL's positions take each frame group as its own run of t = 1 (HF get_rope_index).
                video_grids += [(1, gh, gw)] * groups
            else:
                video_grids.append((groups, gh, gw))
                seconds.append(pre['temporal_patch_size'] / 2.0)  # HF's default fps of 2
    ids = entry['ids']
    tps = None if c.qwen3 else vc['tokens_per_second']
    positions, delta = mrope_positions.rope_index(ids, grids, video_grids, seconds or None, c.merge, tps)
    patches = [x for x, _ in media]
    result = {}
    for dtype in (F64, F32):
        rows, levels = [], []
        for x, g in media:
            if c.qwen3:
                r, lv = qwen_vision.tower3(W, vc, x, g, dtype)
            else:
                r, lv = qwen_vision.tower(W, vc, x, g, dtype), []
            rows.append(r.to(F64))
            levels.append([v.to(F64) for v in lv])
        # Each DeepStack level over all images' rows, in prompt order.
        merged = [torch.cat([lv[k] for lv in levels]) for k in range(len(levels[0]))] if levels and levels[0] else []
        result[dtype] = qwen_decoder.greedy(W, c, ids, torch.cat(rows), positions, delta, dtype, merged)
    (t64, s64), (t32, s32) = result[F64], result[F32]
    if t64 != t32:
        raise ValueError(f'{name} {spec["id"]}: float32 and float64 greedy tokens differ: {t32} vs {t64}')
    gaps = [float(torch.topk(s, 2).values[0] - torch.topk(s, 2).values[1]) for s in s64]
    diff = max(float((a.to(F64) - b).abs().max()) for a, b in zip(s32, s64))
    n = sum(x.shape[0] for x in patches)
    print(f'{name} {spec["id"]}: {len(ids)} prompt tokens ({n} patches), tokens {t64}, min top-2 gap {min(gaps):.3g}, f32 vs f64 {diff:.2e}')
    return {'id': spec['id'], 'tokens': t64,
            'stepTop': [{'ids': t.indices.tolist(), 'logits': t.values.tolist()} for t in (torch.topk(s, qwen_decoder.TOP) for s in s64)],
            # log(sum(exp(logits))) per step: a chosen token's log probability is its logit minus this.
            'logSumExp': [float(torch.logsumexp(s, 0)) for s in s64],
            'minTop2Gap': min(gaps), 'f32VsF64MaxAbsDiff': diff}


def run(entry, specs):
    name = entry['checkpoint']
    d = os.path.join(qwen_decoder.MODELS, name)
    with open(os.path.join(d, 'config.json')) as f:
        raw = json.load(f)
    with open(os.path.join(d, 'preprocessor_config.json')) as f:
        pre = json.load(f)
    W, _, _ = safetensors_io.load_checkpoint(d)
    c = qwen_decoder.Config(raw)
    vpre = None
    if os.path.exists(os.path.join(d, 'video_preprocessor_config.json')):
        with open(os.path.join(d, 'video_preprocessor_config.json')) as f:
            vpre = json.load(f)
    cases = [run_case(W, raw, pre, vpre, c, name, spec, e) for spec, e in zip(specs, entry['cases'])]
    return {'checkpoint': name, 'sha256': safetensors_io.sha256_file(os.path.join(d, 'model.safetensors')), 'cases': cases}


def main():
    with open(INPUT) as f:
        spec = json.load(f)
    models = [run(e, spec['cases']) for e in spec['models']]
    with open(OUT, 'w') as f:
        json.dump({'about': 'test/reference/qwen_pipeline.py', 'models': models}, f)
        f.write('\n')
    print(f'-> {os.path.relpath(OUT, ROOT)}')


if __name__ == '__main__':
    main()
