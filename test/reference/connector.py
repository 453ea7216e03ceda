"""Mirrors HF `Idefics3Connector` (modeling_idefics3.py): `pixel_shuffle` by scale_factor r, then
`Idefics3SimpleMLP` (one Linear, no bias). Written from the index formula, not copied:

    out[b, I*(s/r) + J, (ii*r + jj)*D + d] = x[b, (I*r + ii)*s + (J*r + jj), d]

for a square s x s token grid, I, J < s/r, ii, jj < r: each output token concatenates an r x r block of
input tokens in row-major block order.
"""

import math


def pixel_shuffle(x, r):
    """x [B, s*s, D] -> [B, (s/r)^2, D*r*r]."""
    B, S, D = x.shape
    s = math.isqrt(S)
    if s * s != S or s % r != 0:
        raise ValueError(f'pixel_shuffle needs a square grid divisible by {r}, got {S} tokens')
    g = s // r
    # [b, I, ii, J, jj, d] -> [b, I, J, ii, jj, d]
    return x.reshape(B, g, r, g, r, D).permute(0, 1, 3, 2, 4, 5).reshape(B, g * g, r * r * D)


def connector(image_hidden, W, scale_factor, dtype):
    """[N, S, Dv] vision output -> [N, S/r^2, Dt] text-space image embeddings."""
    w = W['model.connector.modality_projection.proj.weight'].to(dtype)
    return pixel_shuffle(image_hidden, scale_factor) @ w.t()
