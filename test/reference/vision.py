"""SigLIP vision tower as Idefics3/SmolVLM use it, written from the math (not copied):
mirrors HF `Idefics3VisionEmbeddings`, `Idefics3VisionAttention` (= SiglipAttention), `Idefics3VisionMLP`,
`Idefics3EncoderLayer`, `Idefics3VisionTransformer` (modeling_idefics3.py / modeling_siglip.py), and the
patch-mask derivation in `Idefics3Model.forward` / `SmolVLMModel.get_image_features`.

All functions take a `dtype` (torch.float32 or torch.float64); weights are widened to it.
Weights are looked up under `prefix` (default 'model.vision_model.').
"""

import math

import torch


def layer_norm(x, w, b, eps):
    """Biased-variance LayerNorm over the last dim."""
    mu = x.mean(dim=-1, keepdim=True)
    var = ((x - mu) ** 2).mean(dim=-1, keepdim=True)
    return (x - mu) / torch.sqrt(var + eps) * w + b


def gelu_tanh(x):
    """GELU, tanh approximation (HF 'gelu_pytorch_tanh')."""
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x * x * x)))


def linear(x, w, b=None):
    y = x @ w.t()
    return y if b is None else y + b


def patch_embed(pixels, w, b):
    """Conv2d(kernel=P, stride=P) as patches @ W^T: pixels [B, C, H, W] -> [B, (H/P)*(W/P), D], row-major patches."""
    B, C, H, W = pixels.shape
    D, _, P, _ = w.shape
    nh, nw = H // P, W // P
    x = pixels[:, :, :nh * P, :nw * P].reshape(B, C, nh, P, nw, P)
    x = x.permute(0, 2, 4, 1, 3, 5).reshape(B, nh * nw, C * P * P)  # patch (i, j), features (c, ky, kx)
    return x @ w.reshape(D, C * P * P).t() + b


def patch_mask_from_pixel_mask(pixel_mask, patch):
    """[B, H, W] 0/1 pixel mask -> [B, H/P, W/P] bool: a patch is valid if any of its pixels is."""
    B, H, W = pixel_mask.shape
    m = pixel_mask[:, :H // patch * patch, :W // patch * patch].reshape(B, H // patch, patch, W // patch, patch)
    return m.sum(dim=(2, 4)) > 0


def position_ids_for(patch_mask, patches_per_side):
    """Idefics3's bucketized position ids. patch_mask [B, nh, nw] bool -> ids [B, nh*nw] (0 where masked).

    The valid region (nb_h x nb_w patches, top-left) is mapped onto the N x N learned grid: fractional
    coordinates k / nb (float32, as torch.arange(0, 1 - 1e-6, 1 / nb) produces them) are bucketed against
    boundaries 1/N, 2/N, ... (float32) with right=True, i.e. bucket = #(boundaries <= coord).
    """
    N = patches_per_side
    B, nh, nw = patch_mask.shape
    boundaries = torch.arange(1 / N, 1.0, 1 / N)  # float32, like HF
    ids = torch.zeros((B, nh * nw), dtype=torch.long)
    for bi in range(B):
        m = patch_mask[bi]
        nb_h = int(m[:, 0].sum())
        nb_w = int(m[0].sum())
        fh = torch.arange(0, 1 - 1e-6, 1 / torch.tensor(nb_h, dtype=torch.float32))
        fw = torch.arange(0, 1 - 1e-6, 1 / torch.tensor(nb_w, dtype=torch.float32))
        bh = (boundaries[None, :] <= fh[:, None]).sum(dim=1)
        bw = (boundaries[None, :] <= fw[:, None]).sum(dim=1)
        pos = (bh[:, None] * N + bw[None, :]).reshape(-1)
        ids[bi, m.reshape(-1)] = pos
    return ids


def embeddings(pixels, patch_mask, W, cfg, dtype, prefix='model.vision_model.'):
    """Idefics3VisionEmbeddings: patch conv + learned position embedding at bucketized ids."""
    p = prefix + 'embeddings.'
    x = patch_embed(pixels.to(dtype), W[p + 'patch_embedding.weight'].to(dtype), W[p + 'patch_embedding.bias'].to(dtype))
    ids = position_ids_for(patch_mask, cfg['image_size'] // cfg['patch_size'])
    return x + W[p + 'position_embedding.weight'].to(dtype)[ids]


def attention(x, key_valid, wq, bq, wk, bk, wv, bv, wo, bo, heads):
    """Bidirectional multi-head attention. x [B, S, D]; key_valid [B, S] bool or None (masked keys get -inf)."""
    B, S, D = x.shape
    hd = D // heads
    q = linear(x, wq, bq).reshape(B, S, heads, hd).transpose(1, 2)
    k = linear(x, wk, bk).reshape(B, S, heads, hd).transpose(1, 2)
    v = linear(x, wv, bv).reshape(B, S, heads, hd).transpose(1, 2)
    scores = (q @ k.transpose(-1, -2)) / math.sqrt(hd)
    if key_valid is not None:
        scores = scores.masked_fill(~key_valid[:, None, None, :], float('-inf'))
    scores = scores - scores.amax(dim=-1, keepdim=True)
    p = torch.exp(scores)
    p = p / p.sum(dim=-1, keepdim=True)
    o = (p @ v).transpose(1, 2).reshape(B, S, D)
    return linear(o, wo, bo)


def encoder_layer(x, key_valid, W, p, cfg, dtype):
    g = lambda n: W[p + n].to(dtype)  # noqa: E731
    eps = cfg.get('layer_norm_eps', 1e-6)  # HF SmolVLMVisionConfig default (SmolVLM2's config.json omits it)
    h = layer_norm(x, g('layer_norm1.weight'), g('layer_norm1.bias'), eps)
    a = 'self_attn.'
    x = x + attention(h, key_valid,
                      g(a + 'q_proj.weight'), g(a + 'q_proj.bias'), g(a + 'k_proj.weight'), g(a + 'k_proj.bias'),
                      g(a + 'v_proj.weight'), g(a + 'v_proj.bias'), g(a + 'out_proj.weight'), g(a + 'out_proj.bias'),
                      cfg['num_attention_heads'])
    h = layer_norm(x, g('layer_norm2.weight'), g('layer_norm2.bias'), eps)
    h = linear(gelu_tanh(linear(h, g('mlp.fc1.weight'), g('mlp.fc1.bias'))), g('mlp.fc2.weight'), g('mlp.fc2.bias'))
    return x + h


def vision_tower(pixel_values, pixel_attention_mask, W, cfg, dtype, prefix='model.vision_model.'):
    """Idefics3VisionTransformer: pixel_values [N, 3, H, W] (+ [N, H, W] pixel mask) -> post_layernorm output [N, S, D].

    Like Idefics3Model.forward, all-zero (padding) images are dropped first; returns (hidden, kept_index).
    """
    if cfg.get('hidden_act', 'gelu_pytorch_tanh') != 'gelu_pytorch_tanh':
        raise ValueError(f"unsupported vision hidden_act {cfg.get('hidden_act')}")
    pv = torch.as_tensor(pixel_values)
    real = (pv != 0).reshape(pv.shape[0], -1).any(dim=1)
    pv = pv[real]
    pm = torch.as_tensor(pixel_attention_mask)[real] if pixel_attention_mask is not None else torch.ones(
        (pv.shape[0], pv.shape[2], pv.shape[3]), dtype=torch.long)
    patch_mask = patch_mask_from_pixel_mask(pm, cfg['patch_size'])
    x = embeddings(pv, patch_mask, W, cfg, dtype, prefix)
    key_valid = patch_mask.reshape(patch_mask.shape[0], -1)
    if bool(key_valid.all()):
        key_valid = None
    for i in range(cfg['num_hidden_layers']):
        x = encoder_layer(x, key_valid, W, f'{prefix}encoder.layers.{i}.', cfg, dtype)
    x = layer_norm(x, W[prefix + 'post_layernorm.weight'].to(dtype), W[prefix + 'post_layernorm.bias'].to(dtype),
                   cfg.get('layer_norm_eps', 1e-6))
    return x, torch.nonzero(real).reshape(-1)
