"""Reference sizes of the Qwen2-VL-style image resize (HF `smart_resize` in image_processing_qwen2_vl.py,
written from its rules, not copied) -> test/fixtures/goldens/qwen-smart-resize.json.

Rules: refuse a side ratio over 200; round each side to the nearest multiple of `factor` (Python's round,
halves to even); if the area is over max_pixels, scale both sides by 1/sqrt(area/max) and floor each to a
multiple of `factor` (at least `factor`); if under min_pixels, scale by sqrt(min/area) and ceil each.

Run: /usr/bin/python3 test/reference/qwen_smart_resize.py
"""
import json
import math
import os

OUT = os.path.join(os.path.dirname(__file__), '..', 'fixtures', 'goldens', 'qwen-smart-resize.json')


def to_multiple(x, factor, how):
    return how(x / factor) * factor


def smart_resize(height, width, factor, min_pixels, max_pixels):
    if max(height, width) / min(height, width) > 200:
        return None
    h = to_multiple(height, factor, round)
    w = to_multiple(width, factor, round)
    if h * w > max_pixels:
        beta = math.sqrt(height * width / max_pixels)
        h = max(factor, to_multiple(height / beta, factor, math.floor))
        w = max(factor, to_multiple(width / beta, factor, math.floor))
    elif h * w < min_pixels:
        beta = math.sqrt(min_pixels / (height * width))
        h = to_multiple(height * beta, factor, math.ceil)
        w = to_multiple(width * beta, factor, math.ceil)
    return [h, w]


# (name, factor, min_pixels, max_pixels): the HF defaults of Qwen2-VL / Qwen2.5-VL (patch 14, merge 2);
# Qwen2.5-VL-3B-Instruct's preprocessor_config.json (min_pixels, max_pixels); Qwen3-VL-2B/4B-Instruct's
# (patch 16, merge 2; size.shortest_edge / longest_edge), both in test/fixtures/models.
SETTINGS = [
    ('qwen2_5_vl', 28, 56 * 56, 28 * 28 * 1280),
    ('qwen2_5_vl-3b-instruct', 28, 3136, 12845056),
    ('qwen3_vl', 32, 65536, 16777216),
    ('small-budget', 28, 4 * 28 * 28, 64 * 28 * 28),
]

SIZES = [
    (448, 448), (720, 1280), (1280, 720), (1080, 1920), (3024, 4032), (10000, 10000),
    (1, 1), (10, 10), (14, 14), (27, 29), (42, 70), (70, 42), (98, 126), (33, 6000), (6000, 33),
    (30, 6000), (1, 200), (1, 201), (500, 375), (375, 500), (2048, 2048), (1000, 3), (17, 3000),
    (224, 224), (336, 336), (896, 1344), (1512, 2016),
]


def main():
    cases = []
    for name, factor, lo, hi in SETTINGS:
        for h, w in SIZES:
            cases.append({'setting': name, 'factor': factor, 'minPixels': lo, 'maxPixels': hi,
                          'height': h, 'width': w, 'resized': smart_resize(h, w, factor, lo, hi)})
    with open(OUT, 'w') as f:
        json.dump({'about': 'test/reference/qwen_smart_resize.py', 'cases': cases}, f, indent=1)
        f.write('\n')
    print(f'{len(cases)} cases -> {os.path.relpath(OUT)}')


if __name__ == '__main__':
    main()
