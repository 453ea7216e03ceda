"""The 4-frame video golden: smolvlm2-video-tiny answering about four frames, from the independent reference.

Inputs (made by make-video-input.ts): tiny-video-frames.u8.bin [4, 60, 96, 3] RGB and tiny-video-input.json
(prompt ids: HF's video prompt for 4 frames at 0, 1.2, 2.4, 3.8 s of a 4 s clip). Each frame is processed as
HF `SmolVLMVideoProcessor` does (no tiling): longest edge -> size.longest_edge (int, rounded up to even, as
`get_resize_output_image_size`), then -> max_image_size squared, both BICUBIC with antialiasing on uint8.
Pillow's BICUBIC resize is what torch >= 2.1's native uint8 antialiased kernel reproduces on CPU; torch 1.13
(here) only has the float path, whose difference from Pillow is measured and recorded in the manifest
(`hf_float_path_max_diff`). Then rescale/normalize, the vision tower, connector, splice and greedy decoding
as in make_goldens.py (float64 written, float32 compared, KV-cache vs recompute checked).

Run: /usr/bin/python3 test/reference/video_reference.py && npx tsx test/reference/make-video-input.ts \
     && /usr/bin/python3 test/reference/make_video_goldens.py
Writes test/fixtures/goldens/tiny-video-tiles.u8.bin, tiny-video-logits-step0.f32.bin, video-manifest.json.
"""

import json
import os
import sys
import time

import numpy as np
import torch
from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True

import image_processor  # noqa: E402
import make_goldens as mg  # noqa: E402

MODEL = 'smolvlm2-video-tiny'


def video_resize_size(height, width, longest):
    """HF video `get_resize_output_image_size` (no 4096 cap step beyond min(4096, longest))."""
    return image_processor.rescale_to_max_len(height, width, min(4096, longest))


def frame_tile(frame_hwc, pre):
    h, w = video_resize_size(frame_hwc.shape[0], frame_hwc.shape[1], pre['size']['longest_edge'])
    img = Image.fromarray(frame_hwc, 'RGB')
    if (w, h) != img.size:
        img = img.resize((w, h), resample=Image.BICUBIC)
    t = pre['max_image_size']['longest_edge']
    if (t, t) != img.size:
        img = img.resize((t, t), resample=Image.BICUBIC)
    return np.array(img).transpose(2, 0, 1)


def float_path_tile(frame_hwc, pre):
    """What HF does where torch resizes in float (GPU, or torch without the uint8 kernel): interpolate, round."""
    h, w = video_resize_size(frame_hwc.shape[0], frame_hwc.shape[1], pre['size']['longest_edge'])
    x = torch.from_numpy(frame_hwc.transpose(2, 0, 1).copy())[None].to(torch.float32)
    for size in [(h, w), (pre['max_image_size']['longest_edge'],) * 2]:
        if tuple(x.shape[-2:]) != size:
            x = torch.nn.functional.interpolate(x, size=size, mode='bicubic', align_corners=False, antialias=True)
            x = x.clamp(0, 255).round()
    return x[0].to(torch.uint8).numpy()


def main():
    t0 = time.time()
    inp = mg.load_json(os.path.join(mg.OUT, 'tiny-video-input.json'))
    ids = inp['input_ids']
    model_dir = os.path.join(mg.MODELS, MODEL)
    pre = mg.load_json(os.path.join(model_dir, 'preprocessor_config.json'))
    n, hh, ww, _ = inp['frames']['shape']
    frames = np.fromfile(os.path.join(mg.ROOT, inp['frames']['file']), dtype=np.uint8).reshape(n, hh, ww, 3)
    tiles = np.stack([frame_tile(f, pre) for f in frames])
    float_diff = int(max(np.abs(float_path_tile(f, pre).astype(int) - t.astype(int)).max() for f, t in zip(frames, tiles)))
    pv = image_processor.normalize_uint8(tiles, pre['rescale_factor'], pre['image_mean'], pre['image_std'])
    mask = np.ones((n, tiles.shape[2], tiles.shape[3]), dtype=bool)

    src = mg.checkpoint_sources(MODEL)
    frames_src = {inp['frames']['file']: mg.sha256_bytes(frames.tobytes())}
    ids_sha = mg.sha256_bytes(json.dumps(ids, separators=(',', ':')).encode())
    ids_src = {'test/fixtures/goldens/tiny-video-input.json#input_ids': ids_sha}
    mg.write('tiny-video-tiles.u8.bin', tiles, 'u8',
             'The 4 golden frames as SmolVLMVideoProcessor tiles (Pillow BICUBIC: longest edge -> size.longest_edge, '
             'even-rounded, then -> max_image_size squared), RGB uint8 channels first [4, 3, 128, 128].',
             frames_src, {'hf_float_path_max_diff': float_diff})
    print('smolvlm2-video-tiny: float64 / float32 ...')
    r64 = mg.run_model(model_dir, ids, pv, mask, mg.F64)
    r32 = mg.run_model(model_dir, ids, pv, mask, mg.F32)
    rec = mg.recompute_greedy(r64, ids, mg.F64)
    mg.write('tiny-video-logits-step0.f32.bin', r64['step_logits'][0].numpy(), 'f32',
             'smolvlm2-video-tiny logits at the last prompt position for the 4-frame video prompt [vocab].',
             {**src, **frames_src, **ids_src},
             {'f32_vs_f64_max_abs_diff': mg.max_diff(r64['step_logits'][0], r32['step_logits'][0]),
              'argmax': int(torch.argmax(r64['step_logits'][0]))})
    greedy = mg.greedy_summary(r64, r32, rec)
    manifest = {
        'description': 'The 4-frame video golden (test/reference/make_video_goldens.py); same numerics as manifest.json.',
        'regenerate': ['/usr/bin/python3 test/reference/video_reference.py', 'npx tsx test/reference/make-video-input.ts',
                       '/usr/bin/python3 test/reference/make_video_goldens.py'],
        'checkpoint': {MODEL: src},
        'input': {'file': 'test/fixtures/goldens/tiny-video-input.json', 'num_tokens': len(ids),
                  'num_image_tokens': sum(1 for t in ids if t == r64['text'].image_token_id), 'frames': n,
                  'input_ids_sha256': ids_sha},
        'greedy': {MODEL: greedy},
        'files': mg.manifest_files,
        'environment': {'torch': torch.__version__, 'numpy': np.__version__, 'pillow': Image.__version__},
    }
    with open(os.path.join(mg.OUT, 'video-manifest.json'), 'w') as f:
        json.dump(manifest, f, indent=2)
        f.write('\n')
    print(f"wrote video goldens in {time.time() - t0:.1f} s: tokens {greedy['tokens']} ({greedy['stop_reason']}); "
          f"min top1-top2 gap {greedy['min_top1_top2_gap']:.4f}; HF float-path tiles differ by up to {float_diff}")


if __name__ == '__main__':
    main()
