"""Llama decoder (SmolLM2) as Idefics3/SmolVLM use it, written from the math (not copied): mirrors HF
`LlamaModel` / `LlamaDecoderLayer` / `LlamaAttention` / `LlamaMLP` / `LlamaRMSNorm` / `LlamaRotaryEmbedding`
(models/llama/modeling_llama.py), the image splice of `Idefics3Model.inputs_merger` /
`SmolVLMModel.inputs_merger` (image rows fill the <image> positions in order), and the LM head of
`Idefics3ForConditionalGeneration` (tied to embed_tokens when config tie_word_embeddings is true).

RoPE cos/sin are computed in float32 exactly as HF does (inv_freq = 1 / theta ** (arange(0, hd, 2) / hd) in
float32, angle = position * inv_freq in float32, cos/sin in float32) and then widened to the compute dtype.
"""

import math

import torch

from vision import linear


class TextConfig:
    def __init__(self, config):
        t = config['text_config']
        self.hidden = t['hidden_size']
        self.heads = t['num_attention_heads']
        self.kv_heads = t.get('num_key_value_heads') or self.heads
        self.head_dim = t.get('head_dim') or self.hidden // self.heads
        self.layers = t['num_hidden_layers']
        self.eps = t['rms_norm_eps']
        self.theta = t.get('rope_theta', 10000.0)
        self.vocab = t['vocab_size']
        if t.get('rope_scaling'):
            raise ValueError('rope_scaling is not supported by this reference')
        if t.get('hidden_act', 'silu') != 'silu':
            raise ValueError(f"unsupported text hidden_act {t.get('hidden_act')}")
        if t.get('attention_bias') or t.get('mlp_bias'):
            raise ValueError('attention/mlp biases are not supported by this reference')
        top = config.get('tie_word_embeddings')
        self.tied = bool(t.get('tie_word_embeddings', False) if top is None else top)
        self.image_token_id = config['image_token_id']


def rms_norm(x, w, eps):
    return x / torch.sqrt((x * x).mean(dim=-1, keepdim=True) + eps) * w


def silu(x):
    return x / (1.0 + torch.exp(-x))


def rope_cos_sin(positions, head_dim, theta):
    """positions: 1-D long tensor -> (cos, sin) float32 [len, head_dim] (halves repeated)."""
    exponent = torch.arange(0, head_dim, 2, dtype=torch.int64).to(torch.float32) / head_dim
    inv_freq = 1.0 / (theta ** exponent)                       # float32
    angles = positions.to(torch.float32)[:, None] * inv_freq[None, :]  # float32
    angles = torch.cat([angles, angles], dim=-1)
    return torch.cos(angles), torch.sin(angles)


def apply_rope(x, cos, sin):
    """Rotate-half RoPE: pairs (i, i + hd/2). x [..., S, hd]."""
    h = x.shape[-1] // 2
    rotated = torch.cat([-x[..., h:], x[..., :h]], dim=-1)
    return x * cos + rotated * sin


def attention(x, cache, W, p, c, positions, dtype):
    """GQA causal self-attention over cached + new tokens. x [S_new, H]; cache dict with 'k','v' [nKV, S_old, hd]."""
    S = x.shape[0]
    g = lambda n: W[p + n].to(dtype)  # noqa: E731
    q = linear(x, g('q_proj.weight')).reshape(S, c.heads, c.head_dim).transpose(0, 1)
    k = linear(x, g('k_proj.weight')).reshape(S, c.kv_heads, c.head_dim).transpose(0, 1)
    v = linear(x, g('v_proj.weight')).reshape(S, c.kv_heads, c.head_dim).transpose(0, 1)
    cos, sin = rope_cos_sin(positions, c.head_dim, c.theta)
    cos, sin = cos.to(dtype), sin.to(dtype)
    q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
    if cache is not None and 'k' in cache:
        k = torch.cat([cache['k'], k], dim=1)
        v = torch.cat([cache['v'], v], dim=1)
    if cache is not None:
        cache['k'], cache['v'] = k, v
    T = k.shape[1]
    group = c.heads // c.kv_heads
    kh = k.repeat_interleave(group, dim=0)  # q head h uses kv head h // group
    vh = v.repeat_interleave(group, dim=0)
    scores = (q @ kh.transpose(-1, -2)) / math.sqrt(c.head_dim)  # [nH, S, T]
    q_pos = positions[:, None]
    k_pos = torch.arange(T)[None, :]
    scores = scores.masked_fill((k_pos > q_pos)[None], float('-inf'))
    scores = scores - scores.amax(dim=-1, keepdim=True)
    pr = torch.exp(scores)
    pr = pr / pr.sum(dim=-1, keepdim=True)
    o = (pr @ vh).transpose(0, 1).reshape(S, c.heads * c.head_dim)
    return linear(o, g('o_proj.weight'))


def mlp(x, W, p, dtype):
    g = lambda n: W[p + n].to(dtype)  # noqa: E731
    return linear(silu(linear(x, g('gate_proj.weight'))) * linear(x, g('up_proj.weight')), g('down_proj.weight'))


def embed(ids, W, dtype):
    return W['model.text_model.embed_tokens.weight'].to(dtype)[torch.as_tensor(ids, dtype=torch.long)]


def splice_images(x, ids, image_embeds, image_token_id):
    """inputs_merger: the k-th <image> token position takes row k of image_embeds [n, H]."""
    ids = torch.as_tensor(ids, dtype=torch.long)
    pos = torch.nonzero(ids == image_token_id).reshape(-1)
    if pos.numel() != image_embeds.shape[0]:
        raise ValueError(f'{pos.numel()} <image> tokens but {image_embeds.shape[0]} image embeddings')
    x = x.clone()
    x[pos] = image_embeds.to(x.dtype)
    return x


def forward(x, W, c, dtype, caches=None, start=0):
    """Decoder stack on input embeddings x [S, H] at positions start..start+S-1 -> final-norm hidden [S, H].
    caches: list (one dict per layer) updated in place, or None for no cache."""
    positions = torch.arange(start, start + x.shape[0])
    for i in range(c.layers):
        p = f'model.text_model.layers.{i}.'
        h = rms_norm(x, W[p + 'input_layernorm.weight'].to(dtype), c.eps)
        x = x + attention(h, caches[i] if caches is not None else None, W, p + 'self_attn.', c, positions, dtype)
        h = rms_norm(x, W[p + 'post_attention_layernorm.weight'].to(dtype), c.eps)
        x = x + mlp(h, W, p + 'mlp.', dtype)
    return rms_norm(x, W['model.text_model.norm.weight'].to(dtype), c.eps)


def lm_head_weight(W, c, dtype):
    if c.tied:
        if 'lm_head.weight' in W:
            raise ValueError('tied config but checkpoint has lm_head.weight')
        return W['model.text_model.embed_tokens.weight'].to(dtype)
    return W['lm_head.weight'].to(dtype)


def greedy(prompt_embeds, W, c, dtype, max_new, stop_ids, start=0):
    """Greedy decoding with a KV cache. Returns (tokens, per-step logits list, stopped_at or None).

    Generated tokens are embedded from embed_tokens (never replaced by images, as in HF generate)."""
    caches = [dict() for _ in range(c.layers)]
    head = lm_head_weight(W, c, dtype)
    h = forward(prompt_embeds, W, c, dtype, caches, start)
    pos = start + prompt_embeds.shape[0]
    tokens, logits_steps, stopped = [], [], None
    for step in range(max_new):
        logits = h[-1] @ head.t()
        logits_steps.append(logits)
        tok = int(torch.argmax(logits))
        tokens.append(tok)
        if tok in stop_ids:
            stopped = step
            break
        h = forward(embed([tok], W, dtype), W, c, dtype, caches, pos)
        pos += 1
    return tokens, logits_steps, stopped
