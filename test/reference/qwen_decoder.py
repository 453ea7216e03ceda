"""Float64 PyTorch reference of the Qwen-VL decoders -> test/fixtures/goldens/qwen-decoder.json.

Written from the math of transformers' models/qwen2_5_vl/modeling_qwen2_5_vl.py and
models/qwen3_vl/modeling_qwen3_vl.py (not copied):
- Qwen2.5-VL's text model is a Qwen2 decoder: q/k/v projections with biases, o_proj without; M-RoPE whose
  rotary frequencies are split in order into sections (t, h, w) (`apply_multimodal_rotary_pos_emb`: cos and
  sin of each axis' positions, the section's slice taken from its axis, the same split on both halves).
- Qwen3-VL's text model is a Qwen3 decoder: no biases, RMSNorm over head_dim on q and on k (q_norm,
  k_norm) before RoPE; its M-RoPE interleaves the axes (`apply_interleaved_mrope`: frequency i is h when
  i % 3 == 1 and i < 3 * section[1], w when i % 3 == 2 and i < 3 * section[2], t otherwise).
- DeepStack (Qwen3-VL): after decoder layer i (i below the number of tapped vision layers), that level's
  rows are added to the hidden state at the media rows (`_deepstack_process`).
- Both: pre-norm layers (RMSNorm, GQA causal attention scaled by head_dim^-0.5, SwiGLU MLP), final RMSNorm,
  an LM head tied to embed_tokens or not; vision rows replace the embeddings at the image/video pad tokens
  in order (`masked_scatter`).
Positions come from mrope_positions.py (HF `get_rope_index`'s rules): text after the media continues at
its index plus the delta. RoPE angles are float32 as HF computes them (float32 inv_freq times float32
positions, float32 cos/sin), then widened; everything else runs in float64 (and in float32 to measure
how far f32 arithmetic moves the logits).

The media rows are seeded normal noise rounded to float32 and stored in the golden, so the test splices
exactly the rows the reference did: the vision towers are checked on their own.

    /usr/bin/python3 test/reference/qwen_decoder.py      (after `npx tsx scripts/make-tiny.ts`)
"""
import json
import math
import os

import torch

import mrope_positions
import safetensors_io
from decoder import rms_norm, silu
from vision import linear

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))
MODELS = os.path.join(ROOT, 'public', 'models')
OUT = os.path.join(ROOT, 'test', 'fixtures', 'goldens', 'qwen-decoder.json')
F64, F32 = torch.float64, torch.float32
MAX_NEW = 8
TOP = 16


class Config:
    def __init__(self, raw):
        self.model_type = raw['model_type']
        t = raw['text_config'] if isinstance(raw.get('text_config'), dict) else raw
        self.hidden = t['hidden_size']
        self.heads = t['num_attention_heads']
        self.kv_heads = t['num_key_value_heads']
        self.head_dim = t.get('head_dim') or self.hidden // self.heads
        self.layers = t['num_hidden_layers']
        self.eps = t['rms_norm_eps']
        self.theta = t['rope_theta']
        self.vocab = t['vocab_size']
        self.section = (t.get('rope_scaling') or raw.get('rope_scaling'))['mrope_section']
        self.qwen3 = self.model_type == 'qwen3_vl'
        self.interleaved = self.qwen3
        self.prefix = 'model.language_model.' if self.qwen3 else 'model.'
        self.tied = bool(raw.get('tie_word_embeddings', False))
        self.merge = raw['vision_config']['spatial_merge_size']
        # DeepStack (Qwen3-VL): decoder layer i adds the i-th tapped vision level at the media rows.
        self.deepstack = len(raw['vision_config'].get('deepstack_visual_indexes') or []) if self.qwen3 else 0
        self.tokens_per_second = raw['vision_config'].get('tokens_per_second')


def axes(c):
    """The position row (0 t, 1 h, 2 w) of each of the head_dim / 2 frequencies."""
    half = c.head_dim // 2
    t, h, w = c.section
    out = []
    for i in range(half):
        if c.interleaved:
            out.append(1 if (i % 3 == 1 and i < 3 * h) else 2 if (i % 3 == 2 and i < 3 * w) else 0)
        else:
            out.append(0 if i < t else 1 if i < t + h else 2)
    return torch.tensor(out)


def mrope_cos_sin(positions, c):
    """positions [3, L] -> cos, sin [L, head_dim] float32: each frequency's angle from its axis' row."""
    exponent = torch.arange(0, c.head_dim, 2, dtype=torch.int64).to(F32) / c.head_dim
    inv_freq = 1.0 / (c.theta ** exponent)
    angles = positions.to(F32)[:, :, None] * inv_freq[None, None, :]  # [3, L, half] float32
    pick = axes(c)
    chosen = angles[pick, :, torch.arange(c.head_dim // 2)].transpose(0, 1)  # [L, half]
    full = torch.cat([chosen, chosen], dim=-1)
    return torch.cos(full), torch.sin(full)


def rotate(x, cos, sin):
    h = x.shape[-1] // 2
    return x * cos + torch.cat([-x[..., h:], x[..., :h]], dim=-1) * sin


def forward(W, c, embeds, positions, dtype, media_rows=None, deepstack=()):
    """Whole-prompt causal pass: embeds [L, H], positions [3, L] -> final-norm hidden [L, H]. After layer i,
    deepstack[i] [n, H] is added at the rows media_rows (HF Qwen3VLTextModel._deepstack_process)."""
    L = embeds.shape[0]
    g = lambda n: W[n].to(dtype)  # noqa: E731
    cos, sin = mrope_cos_sin(positions, c)
    cos, sin = cos.to(dtype), sin.to(dtype)
    causal = torch.arange(L)[None, :] > torch.arange(L)[:, None]
    x = embeds.to(dtype)
    for i in range(c.layers):
        p = f'{c.prefix}layers.{i}.'
        a = p + 'self_attn.'
        h = rms_norm(x, g(p + 'input_layernorm.weight'), c.eps)
        bias = (lambda n: g(a + n + '.bias')) if not c.qwen3 else (lambda n: None)
        q = linear(h, g(a + 'q_proj.weight'), bias('q_proj')).reshape(L, c.heads, c.head_dim)
        k = linear(h, g(a + 'k_proj.weight'), bias('k_proj')).reshape(L, c.kv_heads, c.head_dim)
        v = linear(h, g(a + 'v_proj.weight'), bias('v_proj')).reshape(L, c.kv_heads, c.head_dim)
        if c.qwen3:
            q = rms_norm(q, g(a + 'q_norm.weight'), c.eps)
            k = rms_norm(k, g(a + 'k_norm.weight'), c.eps)
        q, k, v = (t.transpose(0, 1) for t in (q, k, v))  # [heads, L, hd]
        q, k = rotate(q, cos, sin), rotate(k, cos, sin)
        group = c.heads // c.kv_heads
        kh, vh = k.repeat_interleave(group, dim=0), v.repeat_interleave(group, dim=0)
        s = (q @ kh.transpose(-1, -2)) / math.sqrt(c.head_dim)
        s = s.masked_fill(causal[None], float('-inf'))
        s = s - s.amax(dim=-1, keepdim=True)
        pr = torch.exp(s)
        pr = pr / pr.sum(dim=-1, keepdim=True)
        o = (pr @ vh).transpose(0, 1).reshape(L, c.heads * c.head_dim)
        x = x + linear(o, g(a + 'o_proj.weight'))
        h = rms_norm(x, g(p + 'post_attention_layernorm.weight'), c.eps)
        m = p + 'mlp.'
        x = x + linear(silu(linear(h, g(m + 'gate_proj.weight'))) * linear(h, g(m + 'up_proj.weight')), g(m + 'down_proj.weight'))
        if i < len(deepstack):
            x = x.clone()
            x[media_rows] = x[media_rows] + deepstack[i].to(dtype)
    return rms_norm(x, g(c.prefix + 'norm.weight'), c.eps)


def head_weight(W, c, dtype):
    if c.tied:
        if 'lm_head.weight' in W:
            raise ValueError('tied config but the checkpoint has lm_head.weight')
        return W[c.prefix + 'embed_tokens.weight'].to(dtype)
    return W['lm_head.weight'].to(dtype)


def greedy(W, c, ids, media, positions, delta, dtype, deepstack=()):
    """Greedy tokens: each step recomputes the whole sequence; a new token sits at index + delta on all axes."""
    table = W[c.prefix + 'embed_tokens.weight'].to(dtype)
    head = head_weight(W, c, dtype)
    pads = [i for i, t in enumerate(ids) if t in (mrope_positions.IMAGE_PAD, mrope_positions.VIDEO_PAD)]
    if len(pads) != media.shape[0]:
        raise ValueError(f'{len(pads)} pad tokens, {media.shape[0]} media rows')
    seq, pos = list(ids), positions.clone()
    tokens, steps = [], []
    for _ in range(MAX_NEW):
        x = table[torch.tensor(seq)]
        x[torch.tensor(pads, dtype=torch.long)] = media.to(dtype)
        logits = forward(W, c, x, pos, dtype, torch.tensor(pads, dtype=torch.long), deepstack)[-1] @ head.t()
        steps.append(logits)
        tok = int(torch.argmax(logits))
        tokens.append(tok)
        seq.append(tok)
        nxt = len(seq) - 1 + delta
        pos = torch.cat([pos, torch.tensor([[nxt], [nxt], [nxt]])], dim=1)
    return tokens, steps


def cases(c):
    """(name, parts, video seconds per grid) in mrope_positions.prompt's terms; grids in patches."""
    m = c.merge
    video = [('text', 2), ('video', (2, 2 * m, 3 * m)), ('text', 3)]
    if c.qwen3:
        # Qwen3-VL's videos arrive one frame per run (its processor writes a timestamp before each).
        video = [('text', 2), ('video', (1, 2 * m, 3 * m)), ('text', 2), ('video', (1, 2 * m, 3 * m)), ('text', 3)]
    return [
        ('text only', [('text', 9)], None),
        ('one wide image mid-prompt', [('text', 5), ('image', (1, 2 * m, 4 * m)), ('text', 4)], None),
        ('two images of other shapes', [('text', 3), ('image', (1, 3 * m, 2 * m)), ('text', 2), ('image', (1, m, m)), ('text', 3)], None),
        ('a short video', video, None if c.qwen3 else [1.0]),
    ]


def make_prompt(parts, m, seed):
    """mrope_positions.prompt with varied text ids (a seeded draw from the ordinary vocabulary)."""
    ids, spans, images, videos = mrope_positions.prompt(parts, m)
    g = torch.Generator().manual_seed(seed)
    text = torch.randint(0, 151000, (len(ids),), generator=g).tolist()
    ids = [t if t != mrope_positions.TEXT else text[i] for i, t in enumerate(ids)]
    return ids, spans, images, videos


def run_model(name):
    d = os.path.join(MODELS, name)
    with open(os.path.join(d, 'config.json')) as f:
        c = Config(json.load(f))
    W, _, _ = safetensors_io.load_checkpoint(d)
    out = []
    for k, (case, parts, seconds) in enumerate(cases(c)):
        ids, spans, images, videos = make_prompt(parts, c.merge, 1000 + k)
        tps = None if c.qwen3 else c.tokens_per_second
        positions, delta = mrope_positions.rope_index(ids, images, videos, seconds, c.merge, tps)
        for i, s in enumerate([s for s in spans if s['kind'] == 'video']):
            s['secondsPerGrid'] = seconds[i] if seconds is not None else 1.0
        n_media = sum(1 for t in ids if t in (mrope_positions.IMAGE_PAD, mrope_positions.VIDEO_PAD))
        g = torch.Generator().manual_seed(2000 + k)
        media = torch.randn(n_media, c.hidden, generator=g, dtype=F64).to(F32).to(F64)
        deepstack = [torch.randn(n_media, c.hidden, generator=g, dtype=F64).to(F32).to(F64) for _ in range(c.deepstack)] if n_media else []
        t64, s64 = greedy(W, c, ids, media, positions, delta, F64, deepstack)
        t32, s32 = greedy(W, c, ids, media, positions, delta, F32, deepstack)
        if t64 != t32:
            raise ValueError(f'{name} / {case}: float32 and float64 greedy tokens differ: {t32} vs {t64}')
        gaps = [float(torch.topk(s, 2).values[0] - torch.topk(s, 2).values[1]) for s in s64]
        out.append({
            'name': case,
            'ids': ids,
            'spans': spans,
            'tokensPerSecond': tps,
            'positions': positions.tolist(),
            'delta': delta,
            'media': media.to(F32).flatten().tolist(),
            'deepstack': [d.to(F32).flatten().tolist() for d in deepstack],
            'tokens': t64,
            # Every step's largest logits: with a tied head the tokens often repeat, and the logits still
            # show whether each new token sat at its index + delta.
            'stepTop': [{'ids': t.indices.tolist(), 'logits': t.values.tolist()} for t in (torch.topk(s, TOP) for s in s64)],
            'minTop2Gap': min(gaps),
            'f32VsF64MaxAbsDiff': max(float((a.to(F64) - b).abs().max()) for a, b in zip(s32, s64)),
        })
        print(f'{name} / {case}: {len(ids)} tokens, {n_media} media rows, tokens {t64}, '
              f'min top-2 gap {min(gaps):.3g}, f32 vs f64 {out[-1]["f32VsF64MaxAbsDiff"]:.2e}')
    return {'checkpoint': name, 'sha256': safetensors_io.sha256_file(os.path.join(d, 'model.safetensors')), 'cases': out}


def main():
    models = [run_model(n) for n in ('qwen2_5_vl-tiny', 'qwen3_vl-tiny')]
    with open(OUT, 'w') as f:
        json.dump({'about': 'test/reference/qwen_decoder.py', 'maxNew': MAX_NEW, 'models': models}, f)
        f.write('\n')
    print(f'-> {os.path.relpath(OUT, ROOT)}')


if __name__ == '__main__':
    main()
