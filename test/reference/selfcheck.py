"""Self-checks of the reference building blocks against independent formulations (explicit loops, torch
built-ins, complex-number RoPE, torch.bucketize, torch bfloat16). Run by make_goldens.py before anything is
written; also runnable alone: /usr/bin/python3 test/reference/selfcheck.py
"""

import math

import numpy as np
import torch
import torch.nn.functional as F

import connector
import decoder
import image_processor
import safetensors_io
import vision

D64 = torch.float64


def _close(name, a, b, tol):
    err = float((a - b).abs().max())
    if not err <= tol:
        raise AssertionError(f'selfcheck {name}: max abs diff {err:.3e} > {tol:.1e}')
    return name, err


def check_vision_attention(gen):
    B, S, D, H = 2, 10, 12, 3
    x = torch.randn(B, S, D, generator=gen, dtype=D64)
    ws = [torch.randn(D, D, generator=gen, dtype=D64) * 0.3 for _ in range(4)]
    bs = [torch.randn(D, generator=gen, dtype=D64) * 0.1 for _ in range(4)]
    valid = torch.ones(B, S, dtype=torch.bool)
    valid[1, 7:] = False
    got = vision.attention(x, valid, ws[0], bs[0], ws[1], bs[1], ws[2], bs[2], ws[3], bs[3], H)
    hd = D // H
    want = torch.zeros(B, S, D, dtype=D64)
    for b in range(B):
        q = x[b] @ ws[0].t() + bs[0]
        k = x[b] @ ws[1].t() + bs[1]
        v = x[b] @ ws[2].t() + bs[2]
        o = torch.zeros(S, D, dtype=D64)
        for h in range(H):
            sl = slice(h * hd, (h + 1) * hd)
            for i in range(S):
                e = [math.exp(float(q[i, sl] @ k[j, sl]) / math.sqrt(hd)) if valid[b, j] else 0.0 for j in range(S)]
                tot = sum(e)
                o[i, sl] = sum(e[j] / tot * v[j, sl] for j in range(S))
        want[b] = o @ ws[3].t() + bs[3]
    return _close('vision attention vs explicit softmax loop (with key mask)', got, want, 1e-12)


def check_text_attention(gen):
    class C:
        heads, kv_heads, head_dim, theta = 4, 2, 6, 100000.0
    c = C()
    S, Hd = 7, 10
    W = {
        'a.q_proj.weight': torch.randn(c.heads * c.head_dim, Hd, generator=gen, dtype=D64) * 0.3,
        'a.k_proj.weight': torch.randn(c.kv_heads * c.head_dim, Hd, generator=gen, dtype=D64) * 0.3,
        'a.v_proj.weight': torch.randn(c.kv_heads * c.head_dim, Hd, generator=gen, dtype=D64) * 0.3,
        'a.o_proj.weight': torch.randn(Hd, c.heads * c.head_dim, generator=gen, dtype=D64) * 0.3,
    }
    x = torch.randn(S, Hd, generator=gen, dtype=D64)
    pos = torch.arange(S)
    got = decoder.attention(x, None, W, 'a.', c, pos, D64)
    cos, sin = decoder.rope_cos_sin(pos, c.head_dim, c.theta)
    cos, sin = cos.to(D64), sin.to(D64)
    q = x @ W['a.q_proj.weight'].t()
    k = x @ W['a.k_proj.weight'].t()
    v = x @ W['a.v_proj.weight'].t()
    half = c.head_dim // 2

    def rot(vec, t):  # rotate pairs (i, i + half) by angle: as complex multiplication
        z = torch.complex(vec[:half], vec[half:]) * torch.complex(cos[t, :half], sin[t, :half])
        return torch.cat([z.real, z.imag])

    o = torch.zeros(S, c.heads * c.head_dim, dtype=D64)
    for h in range(c.heads):
        kvh = h // (c.heads // c.kv_heads)
        qs = slice(h * c.head_dim, (h + 1) * c.head_dim)
        ks = slice(kvh * c.head_dim, (kvh + 1) * c.head_dim)
        for i in range(S):
            qi = rot(q[i, qs], i)
            e = [math.exp(float(qi @ rot(k[j, ks], j)) / math.sqrt(c.head_dim)) for j in range(i + 1)]
            tot = sum(e)
            o[i, qs] = sum(e[j] / tot * v[j, ks] for j in range(i + 1))
    want = o @ W['a.o_proj.weight'].t()
    r1 = _close('text GQA causal attention + RoPE vs explicit loop with complex rotation', got, want, 1e-12)
    # KV-cache path: prefix then one token at a time must equal the full pass
    cache = {}
    parts = [decoder.attention(x[:4], cache, W, 'a.', c, pos[:4], D64)]
    for t in range(4, S):
        parts.append(decoder.attention(x[t:t + 1], cache, W, 'a.', c, pos[t:t + 1], D64))
    r2 = _close('text attention with KV cache vs full pass', torch.cat(parts), got, 1e-13)
    return r1, r2


def check_rope_float32():
    pos = torch.arange(0, 300)
    cos, sin = decoder.rope_cos_sin(pos, 64, 100000)
    assert cos.dtype == torch.float32
    inv = np.array([np.float32(1.0) / np.float32(np.float32(100000.0) ** np.float32(np.float32(i) / np.float32(64)))
                    for i in range(0, 64, 2)], dtype=np.float32)
    ang = (pos.numpy().astype(np.float32)[:, None] * inv[None, :]).astype(np.float32)
    ref = torch.from_numpy(np.cos(np.concatenate([ang, ang], axis=1).astype(np.float64)))
    return _close('RoPE cos (float32 angles) vs numpy float32 angles', cos.to(D64), ref, 2e-7)


def check_pixel_shuffle(gen):
    B, s, D, r = 2, 8, 5, 2
    x = torch.randn(B, s * s, D, generator=gen, dtype=D64)
    got = connector.pixel_shuffle(x, r)
    g = s // r
    want = torch.zeros(B, g * g, D * r * r, dtype=D64)
    for b in range(B):
        for I in range(g):
            for J in range(g):
                for ii in range(r):
                    for jj in range(r):
                        for d in range(D):
                            want[b, I * g + J, (ii * r + jj) * D + d] = x[b, (I * r + ii) * s + (J * r + jj), d]
    return _close('pixel shuffle vs explicit index formula', got, want, 0.0)


def check_patch_embed(gen):
    pix = torch.randn(2, 3, 32, 48, generator=gen, dtype=D64)
    w = torch.randn(7, 3, 16, 16, generator=gen, dtype=D64)
    b = torch.randn(7, generator=gen, dtype=D64)
    got = vision.patch_embed(pix, w, b)
    want = F.conv2d(pix, w, b, stride=16).flatten(2).transpose(1, 2)
    return _close('patch embedding vs F.conv2d', got, want, 1e-12)


def check_elementwise(gen):
    x = torch.randn(4, 33, generator=gen, dtype=D64) * 3
    w = torch.randn(33, generator=gen, dtype=D64)
    b = torch.randn(33, generator=gen, dtype=D64)
    out = [
        _close('layer_norm vs F.layer_norm', vision.layer_norm(x, w, b, 1e-6), F.layer_norm(x, (33,), w, b, 1e-6), 1e-12),
        _close('gelu_tanh vs F.gelu(approximate=tanh)', vision.gelu_tanh(x), F.gelu(x, approximate='tanh'), 1e-12),
        _close('silu vs F.silu', decoder.silu(x), F.silu(x), 1e-12),
    ]
    rms = torch.stack([row / math.sqrt(float((row ** 2).sum()) / 33 + 1e-5) * w for row in x])
    out.append(_close('rms_norm vs per-row formula', decoder.rms_norm(x, w, 1e-5), rms, 1e-12))
    return out


def check_position_ids():
    N = 8
    boundaries = torch.arange(1 / N, 1.0, 1 / N)
    mask = torch.zeros(3, N, N, dtype=torch.bool)
    mask[0] = True
    mask[1, :5, :3] = True
    mask[2, :8, :6] = True
    got = vision.position_ids_for(mask, N)
    want = torch.zeros(3, N * N, dtype=torch.long)
    for bi in range(3):
        nb_h, nb_w = int(mask[bi][:, 0].sum()), int(mask[bi][0].sum())
        fh = torch.arange(0, 1 - 1e-6, 1 / torch.tensor(nb_h, dtype=torch.float32))
        fw = torch.arange(0, 1 - 1e-6, 1 / torch.tensor(nb_w, dtype=torch.float32))
        ph = torch.bucketize(fh, boundaries, right=True)
        pw = torch.bucketize(fw, boundaries, right=True)
        want[bi, mask[bi].reshape(-1)] = (ph[:, None] * N + pw[None, :]).reshape(-1)
    assert torch.equal(got, want), 'position ids vs torch.bucketize'
    assert torch.equal(got[0], torch.arange(N * N)), 'full mask must give identity position ids'
    ids32 = vision.position_ids_for(torch.ones(1, 32, 32, dtype=torch.bool), 32)
    assert torch.equal(ids32[0], torch.arange(1024)), 'full 32x32 mask must give identity position ids'
    return 'position ids vs torch.bucketize (full and partial masks)', 0.0


def check_bf16_decode(gen):
    x = torch.randn(1000, generator=gen) * 10
    bf = x.to(torch.bfloat16)
    raw = bf.view(torch.int16).numpy().astype('<i2').tobytes()
    got = torch.from_numpy(safetensors_io._decode(raw, 'BF16', [1000]).copy())
    assert torch.equal(got, bf.to(torch.float32)), 'BF16 decode vs torch bfloat16'
    h = x.to(torch.float16)
    got16 = torch.from_numpy(safetensors_io._decode(h.numpy().astype('<f2').tobytes(), 'F16', [1000]).copy())
    assert torch.equal(got16, h.to(torch.float32)), 'F16 decode vs torch float16'
    return 'safetensors BF16/F16 decode vs torch bfloat16/float16', 0.0


def check_image_sizes():
    # expected values hand-computed from the HF rules
    assert image_processor.rescale_to_max_len(480, 640, 512) == (384, 512)
    assert image_processor.rescale_to_max_len(640, 480, 512) == (512, 384)
    assert image_processor.rescale_to_max_len(333, 1000, 512) == (170, 512)   # int(170.49) = 170, even
    assert image_processor.rescale_to_max_len(335, 1000, 512) == (172, 512)   # int(171.52) = 171, odd -> 172
    assert image_processor.rescale_to_max_len(1000, 101, 512) == (512, 52)    # int(51.7) = 51, odd -> 52
    assert image_processor.vision_encoder_size(384, 512, 128) == (384, 512)
    assert image_processor.vision_encoder_size(170, 512, 128) == (256, 512)
    assert image_processor.vision_encoder_size(512, 300, 128) == (512, 384)
    return 'image processor size arithmetic', 0.0


def check_encoder_layer_vs_torch_nn(gen):
    """A whole SigLIP encoder layer vs torch.nn.TransformerEncoderLayer (pre-norm, MHA with biases, tanh GELU)."""
    D, H, I, S = 16, 2, 24, 9
    ref = torch.nn.TransformerEncoderLayer(D, H, dim_feedforward=I, dropout=0.0,
                                           activation=lambda t: F.gelu(t, approximate='tanh'),
                                           layer_norm_eps=1e-6, batch_first=True, norm_first=True).to(D64).eval()
    W = {}
    with torch.no_grad():
        for p in ref.parameters():
            p.copy_(torch.randn(p.shape, generator=gen, dtype=D64) * 0.3)
    p = 'L.'
    q, k, v = ref.self_attn.in_proj_weight.detach().chunk(3)
    qb, kb, vb = ref.self_attn.in_proj_bias.detach().chunk(3)
    W.update({p + 'self_attn.q_proj.weight': q, p + 'self_attn.k_proj.weight': k, p + 'self_attn.v_proj.weight': v,
              p + 'self_attn.q_proj.bias': qb, p + 'self_attn.k_proj.bias': kb, p + 'self_attn.v_proj.bias': vb,
              p + 'self_attn.out_proj.weight': ref.self_attn.out_proj.weight.detach(),
              p + 'self_attn.out_proj.bias': ref.self_attn.out_proj.bias.detach(),
              p + 'layer_norm1.weight': ref.norm1.weight.detach(), p + 'layer_norm1.bias': ref.norm1.bias.detach(),
              p + 'layer_norm2.weight': ref.norm2.weight.detach(), p + 'layer_norm2.bias': ref.norm2.bias.detach(),
              p + 'mlp.fc1.weight': ref.linear1.weight.detach(), p + 'mlp.fc1.bias': ref.linear1.bias.detach(),
              p + 'mlp.fc2.weight': ref.linear2.weight.detach(), p + 'mlp.fc2.bias': ref.linear2.bias.detach()})
    x = torch.randn(2, S, D, generator=gen, dtype=D64)
    valid = torch.ones(2, S, dtype=torch.bool)
    valid[1, 6:] = False
    cfg = {'layer_norm_eps': 1e-6, 'num_attention_heads': H}
    got = vision.encoder_layer(x, valid, W, p, cfg, D64)
    with torch.no_grad():
        want = ref(x, src_key_padding_mask=~valid)
    return _close('SigLIP encoder layer vs torch.nn.TransformerEncoderLayer (norm_first, key padding mask)',
                  got, want, 1e-12)


def run_all(verbose=True):
    gen = torch.Generator().manual_seed(1234)
    results = [check_vision_attention(gen), *check_text_attention(gen), check_pixel_shuffle(gen),
               check_patch_embed(gen), *check_elementwise(gen), check_bf16_decode(gen),
               check_encoder_layer_vs_torch_nn(gen)]
    results.append(check_rope_float32())
    results.append(check_position_ids())
    results.append(check_image_sizes())
    if verbose:
        for name, err in results:
            print(f'  ok  {name}  (max abs diff {err:.2e})')
    return [{'check': n, 'max_abs_diff': e} for n, e in results]


if __name__ == '__main__':
    run_all()
