"""Mirrors HF `Idefics3ImageProcessor` (transformers models/idefics3/image_processing_idefics3.py, the slow
PIL path; SmolVLMImageProcessor is the same class) for one image: an independent re-implementation.

Steps, each as HF does them:
  1. PIL image -> numpy uint8 HWC (a palette image keeps its palette for step 5).
  2. resize: longest edge -> size.longest_edge (`_resize_output_size_rescale_to_max_len`: the other side is
     int(...) of the aspect-ratio product, bumped to even; then capped by the 4096 absolute maximum), PIL
     `Image.resize((w, h), resample)` with resample from the config (1 = LANCZOS).
  3. resize_for_vision_encoder: the longest side up to a multiple of max_image_size.longest_edge, the other side
     int(...) of the aspect-ratio product then up to a multiple as well (aspect ratio NOT kept exactly).
  4. split_image: if larger than max_image_size, ceil(h/M) x ceil(w/M) crops of ceil(h/rows) x ceil(w/cols),
     row-major, then the whole image resized to M x M (PIL, same resample) appended last.
  5. convert_to_rgb: RGBA, alpha-composited on opaque white, back to RGB.
  6. rescale: float64 multiply by rescale_factor, then cast to float32.
  7. normalize: (x - mean) / std in float32.
  8. pad to the largest tile (all tiles are M x M here) with pixel_attention_mask; channels first.
"""

import math

import numpy as np
from PIL import Image

MAX_IMAGE_SIZE = 4096  # HF's absolute cap on the first resize (older releases used 1820)


def rescale_to_max_len(height, width, max_len, min_len=1):
    """`_resize_output_size_rescale_to_max_len`: longest edge -> max_len, other side int(...) made even."""
    aspect = width / height
    if width >= height:
        width = max_len
        height = int(width / aspect)
        if height % 2 != 0:
            height += 1
    else:
        height = max_len
        width = int(height * aspect)
        if width % 2 != 0:
            width += 1
    return max(height, min_len), max(width, min_len)


def scale_below_upper_bound(height, width, max_len):
    """`_resize_output_size_scale_below_upper_bound`."""
    aspect = width / height
    if width >= height and width > max_len:
        width = max_len
        height = int(width / aspect)
    elif height > width and height > max_len:
        height = max_len
        width = int(height * aspect)
    return max(height, 1), max(width, 1)


def vision_encoder_size(height, width, m):
    """`resize_for_vision_encoder` target size (multiples of m)."""
    aspect = width / height
    if width >= height:
        width = math.ceil(width / m) * m
        height = int(width / aspect)
        height = math.ceil(height / m) * m
    else:
        height = math.ceil(height / m) * m
        width = int(height * aspect)
        width = math.ceil(width / m) * m
    return height, width


def _to_pil(arr, mode=None):
    """HF's custom to_pil_image: squeeze a single channel, cast to uint8, Image.fromarray(mode=...)."""
    if arr.ndim == 3 and arr.shape[-1] == 1:
        arr = arr[..., 0]
    return Image.fromarray(arr.astype(np.uint8), mode=mode)


def pil_resize(arr, height, width, resample):
    """HF Idefics3ImageProcessor.resize with an explicit (height, width): numpy HWC -> PIL -> resize -> numpy."""
    mode = 'P' if (arr.ndim == 2 or arr.shape[-1] == 1) else None
    out = np.array(_to_pil(arr, mode).resize((width, height), resample=resample))
    if out.ndim == 2:
        out = out[..., None]
    return out


def convert_to_rgb(arr, palette=None):
    img = _to_pil(arr, 'P' if palette is not None else None)
    if img.mode == 'P' and palette is not None:
        img.putpalette(palette)
    rgba = img.convert('RGBA')
    background = Image.new('RGBA', rgba.size, (255, 255, 255))
    return np.array(Image.alpha_composite(background, rgba).convert('RGB'))


def split_tiles(arr, m, resample):
    """`split_image`: returns (frames, rows, cols); frames are HWC arrays, the global image last."""
    h, w = arr.shape[:2]
    frames = []
    if h > m or w > m:
        rows, cols = math.ceil(h / m), math.ceil(w / m)
        th, tw = math.ceil(h / rows), math.ceil(w / cols)
        for r in range(rows):
            for c in range(cols):
                y0, x0 = r * th, c * tw
                frames.append(arr[y0:min(y0 + th, h), x0:min(x0 + tw, w), :])
        if (h, w) != (m, m):
            arr = pil_resize(arr, m, m, resample)
    else:
        rows, cols = 0, 0
    frames.append(arr)
    return frames, rows, cols


def preprocess(image, cfg):
    """One PIL image + preprocessor_config.json dict -> dict with
    tiles_uint8 [N, 3, M, M] (RGB after convert_to_rgb, before rescale), pixel_values float32 [N, 3, M, M],
    pixel_attention_mask int64 [N, M, M], rows, cols, resized_size (h, w after step 2), encoder_size (step 3)."""
    resample = cfg.get('resample', Image.LANCZOS)
    palette = image.getpalette() if image.mode == 'P' else None
    arr = np.array(image)
    if arr.ndim == 2:
        arr = arr[..., None]

    h, w = arr.shape[:2]
    resized_size = None
    if cfg.get('do_resize', True):
        nh, nw = rescale_to_max_len(h, w, cfg['size']['longest_edge'])
        nh, nw = scale_below_upper_bound(nh, nw, MAX_IMAGE_SIZE)
        arr = pil_resize(arr, nh, nw, resample)
        resized_size = arr.shape[:2]

    encoder_size = None
    if cfg.get('do_image_splitting', True):
        m = cfg['max_image_size']['longest_edge']
        eh, ew = vision_encoder_size(arr.shape[0], arr.shape[1], m)
        arr = pil_resize(arr, eh, ew, resample)
        encoder_size = arr.shape[:2]
        frames, rows, cols = split_tiles(arr, m, resample)
    else:
        frames, rows, cols = [arr], 0, 0

    if cfg.get('do_convert_rgb', True):
        frames = [convert_to_rgb(f, palette) for f in frames]
    tiles_u8 = frames

    floats = [f.astype(np.float64) for f in frames]
    if cfg.get('do_rescale', True):
        floats = [(f * cfg['rescale_factor']).astype(np.float32) for f in floats]
    else:
        floats = [f.astype(np.float32) for f in floats]
    if cfg.get('do_normalize', True):
        mean = np.array(cfg['image_mean'], dtype=np.float32)
        std = np.array(cfg['image_std'], dtype=np.float32)
        floats = [(f - mean) / std for f in floats]

    ph = max(f.shape[0] for f in floats)
    pw = max(f.shape[1] for f in floats)
    n, c = len(floats), floats[0].shape[2]
    pixel_values = np.zeros((n, c, ph, pw), dtype=np.float32)
    tiles = np.zeros((n, c, ph, pw), dtype=np.uint8)
    mask = np.zeros((n, ph, pw), dtype=np.int64)
    for i, (f, u) in enumerate(zip(floats, tiles_u8)):
        fh, fw = f.shape[:2]
        pixel_values[i, :, :fh, :fw] = f.transpose(2, 0, 1)
        tiles[i, :, :fh, :fw] = u.transpose(2, 0, 1)
        mask[i, :fh, :fw] = 1
    return {
        'tiles_uint8': tiles,
        'pixel_values': pixel_values,
        'pixel_attention_mask': mask,
        'rows': rows,
        'cols': cols,
        'resized_size': tuple(int(x) for x in resized_size) if resized_size else None,
        'encoder_size': tuple(int(x) for x in encoder_size) if encoder_size else None,
    }


def normalize_uint8(tiles_u8, rescale_factor, mean, std):
    """The float pixel values HF derives from uint8 tiles [N, C, H, W] (steps 6-7)."""
    x = (tiles_u8.astype(np.float64) * rescale_factor).astype(np.float32)
    m = np.array(mean, dtype=np.float32)[None, :, None, None]
    s = np.array(std, dtype=np.float32)[None, :, None, None]
    return (x - m) / s
