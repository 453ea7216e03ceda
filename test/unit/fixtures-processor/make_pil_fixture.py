# Makes pil-resample.json: Pillow's own results for small resizes and for alpha compositing over white,
# which test/unit/processor-image.test.ts compares resample.ts and toRgb() against, bit for bit.
# Run with Debian's Pillow: /usr/bin/python3 test/unit/fixtures-processor/make_pil_fixture.py
import base64, json, os
import numpy as np
import PIL
from PIL import Image

rng = np.random.default_rng(1234)
FILTERS = {'lanczos': Image.LANCZOS, 'bilinear': Image.BILINEAR, 'bicubic': Image.BICUBIC,
           'box': Image.BOX, 'hamming': Image.HAMMING}
CASES = [  # (w, h, out_w, out_h, filter)
    (7, 5, 3, 4, 'lanczos'), (7, 5, 11, 9, 'lanczos'), (13, 1, 4, 1, 'lanczos'), (1, 1, 5, 3, 'lanczos'),
    (20, 30, 7, 31, 'lanczos'), (64, 48, 17, 13, 'lanczos'), (9, 9, 9, 4, 'lanczos'), (9, 9, 4, 9, 'lanczos'),
    (31, 17, 12, 40, 'bilinear'), (31, 17, 12, 40, 'bicubic'), (31, 17, 12, 40, 'box'), (31, 17, 12, 40, 'hamming'),
]
b64 = lambda a: base64.b64encode(np.ascontiguousarray(a, dtype=np.uint8).tobytes()).decode()
cases = []
for w, h, ow, oh, f in CASES:
    src = rng.integers(0, 256, (h, w, 3), dtype=np.uint8)
    src[:, : w // 2, 0] = 255  # hard edges make the clipping between passes matter
    out = np.array(Image.fromarray(src, 'RGB').resize((ow, oh), resample=FILTERS[f]))
    cases.append(dict(width=w, height=h, outWidth=ow, outHeight=oh, filter=f, src=b64(src), out=b64(out)))
# Alpha composite over opaque white (HF convert_to_rgb): every alpha for a few values.
values = [0, 1, 37, 128, 200, 254, 255]
rgba = np.zeros((len(values), 256, 4), np.uint8)
for i, v in enumerate(values):
    rgba[i, :, 0] = v
    rgba[i, :, 1] = 255 - v
    rgba[i, :, 2] = (v * 7) % 256
    rgba[i, :, 3] = np.arange(256)
im = Image.fromarray(rgba, 'RGBA')
comp = np.array(Image.alpha_composite(Image.new('RGBA', im.size, (255, 255, 255)), im).convert('RGB'))
json.dump(dict(pillow=PIL.__version__, resize=cases,
               composite=dict(width=256, height=len(values), rgba=b64(rgba), rgb=b64(comp))),
          open(os.path.join(os.path.dirname(os.path.abspath(__file__)), 'pil-resample.json'), 'w'), indent=1)
