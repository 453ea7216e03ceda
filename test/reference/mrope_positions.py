"""Reference M-RoPE position ids (HF Qwen2.5-VL `get_rope_index`, written from its rules, not copied)
-> test/fixtures/goldens/mrope-positions.json.

A prompt is token ids in which each image or video is one run of pad tokens right after <|vision_start|>.
Walking the prompt: a text stretch gets 1-D positions (the same on t, h and w) continuing from the largest
position so far plus one; a vision run of llm grid (t, h // merge, w // merge) gets, offset by where its
stretch starts, t = int(i * second_per_grid_t * tokens_per_second) in float32 as torch computes it (images:
second_per_grid_t 0 in Qwen2.5-VL), h = row, w = column. The delta is max position + 1 - number of tokens:
the position of the next token is its index plus the delta. With tokens_per_second None (Qwen3-VL, whose
videos arrive one frame per run), t is the plain grid index.

Run: /usr/bin/python3 test/reference/mrope_positions.py
"""
import json
import os

import torch

OUT = os.path.join(os.path.dirname(__file__), '..', 'fixtures', 'goldens', 'mrope-positions.json')
VISION_START, IMAGE_PAD, VIDEO_PAD, TEXT = 151652, 151655, 151656, 100


def rope_index(ids, image_grids, video_grids, seconds, merge, tokens_per_second):
    pieces = []
    st = 0
    next_image = next_video = 0

    def following():
        return int(pieces[-1].max()) + 1 if pieces else 0

    starts = [i + 1 for i, t in enumerate(ids) if t == VISION_START and i + 1 < len(ids)]
    for s in starts:
        kind = ids[s]
        if kind == IMAGE_PAD:
            t, h, w = image_grids[next_image]
            second = 0.0
            next_image += 1
        elif kind == VIDEO_PAD:
            t, h, w = video_grids[next_video]
            second = seconds[next_video] if seconds is not None else 1.0
            next_video += 1
        else:
            continue
        gt, gh, gw = t, h // merge, w // merge
        text_len = s - st
        base = following()
        pieces.append(torch.arange(text_len).view(1, -1).expand(3, -1) + base)
        frame = torch.arange(gt).view(-1, 1).expand(-1, gh * gw)
        if tokens_per_second is None:
            t_index = frame.flatten()
        else:
            # torch: int64 grid index times a float32 0-d tensor, then .long() (truncation)
            t_index = (frame * torch.tensor(second, dtype=torch.float32) * tokens_per_second).long().flatten()
        h_index = torch.arange(gh).view(1, -1, 1).expand(gt, -1, gw).flatten()
        w_index = torch.arange(gw).view(1, 1, -1).expand(gt, gh, -1).flatten()
        pieces.append(torch.stack([t_index, h_index, w_index]) + text_len + base)
        st = s + gt * gh * gw
    if st < len(ids):
        base = following()
        pieces.append(torch.arange(len(ids) - st).view(1, -1).expand(3, -1) + base)
    pos = torch.cat(pieces, dim=1)
    return pos, int(pos.max()) + 1 - len(ids)


def prompt(parts, merge):
    """parts: ('text', n) | ('image', (t, h, w)) | ('video', (t, h, w)) -> ids and the runs' starts."""
    ids, spans, images, videos = [], [], [], []
    for kind, v in parts:
        if kind == 'text':
            ids += [TEXT] * v
            continue
        t, h, w = v
        ids.append(VISION_START)
        spans.append({'kind': kind, 'start': len(ids), 'grid': {'t': t, 'h': h, 'w': w}})
        ids += [IMAGE_PAD if kind == 'image' else VIDEO_PAD] * (t * (h // merge) * (w // merge))
        (images if kind == 'image' else videos).append((t, h, w))
        ids.append(VISION_START + 1)  # <|vision_end|>
    return ids, spans, images, videos


CASES = [
    # name, parts, merge, tokens_per_second, seconds per video grid
    ('text only', [('text', 7)], 2, 2, None),
    ('one image mid-prompt', [('text', 5), ('image', (1, 4, 6)), ('text', 4)], 2, 2, None),
    ('image first, two images, no text after', [('image', (1, 6, 4)), ('text', 3), ('image', (1, 2, 2))], 2, 2, None),
    ('video at 1 s per grid', [('text', 2), ('video', (3, 4, 4)), ('text', 3)], 2, 2, [1.0]),
    ('video at 2/3 s per grid (fps 3)', [('text', 2), ('video', (4, 2, 4)), ('text', 1)], 2, 2, [2 / 3]),
    ('image and video, 0.5 s per grid', [('image', (1, 4, 4)), ('text', 2), ('video', (5, 2, 2)), ('text', 2)], 2, 2, [0.5]),
    ('Qwen3-VL frames: plain grid index', [('text', 3), ('video', (1, 4, 4)), ('text', 2), ('video', (1, 4, 4))], 2, None, None),
    ('merge 1', [('text', 1), ('image', (1, 3, 2)), ('text', 2)], 1, 2, None),
]


def main():
    cases = []
    for name, parts, merge, tps, seconds in CASES:
        ids, spans, images, videos = prompt(parts, merge)
        pos, delta = rope_index(ids, images, videos, seconds, merge, tps)
        for i, s in enumerate([s for s in spans if s['kind'] == 'video']):
            s['secondsPerGrid'] = seconds[i] if seconds is not None else 1.0
        cases.append({'name': name, 'numTokens': len(ids), 'mergeSize': merge, 'tokensPerSecond': tps, 'spans': spans,
                      'positions': pos.tolist(), 'delta': delta})
    with open(OUT, 'w') as f:
        json.dump({'about': 'test/reference/mrope_positions.py', 'cases': cases}, f)
        f.write('\n')
    print(f'{len(cases)} cases -> {os.path.relpath(OUT)}')


if __name__ == '__main__':
    main()
