"""The three torch modules exported for transformers.js's Idefics3ForConditionalGeneration (see README.md).

They compute the same math as the project's independent reference (test/reference/vision.py, connector.py,
decoder.py; export.py checks them against it before exporting) but are written with the standard torch ops
HF's own modeling code uses (F.layer_norm, softmax, an additive attention mask, HF's pixel_shuffle reshape
sequence, HF's RMSNorm), so the ONNX graphs look like an ordinary HF/optimum export and onnxruntime gets its
usual LayerNormalization / Softmax kernels. That keeps the peer comparison fair: a graph of the reference's
explicit max/exp/sum softmax would be slower in ORT for reasons that have nothing to do with ORT.

Weights are registered as parameters (float32) so they become named ONNX initializers.

  VisionEncoder  pixel_values [batch, num_images, 3, H, W] f32, pixel_attention_mask [batch, num_images, H, W] bool
                 -> image_features [batch*num_images, (H/P / r)^2, text_hidden] f32
                 (HF Idefics3Model.get_image_features: vision tower + post_layernorm + Idefics3Connector)
  EmbedTokens    input_ids [batch, seq] i64 -> inputs_embeds [batch, seq, text_hidden] f32
  Decoder        inputs_embeds, attention_mask [batch, past+seq] i64, position_ids [batch, seq] i64,
                 past_key_values.{i}.key/value [batch, kv_heads, past, head_dim] f32, num_logits_to_keep i64 []
                 -> logits [batch, keep, vocab] f32 (keep = seq when num_logits_to_keep is 0),
                    present.{i}.key/value [batch, kv_heads, past+seq, head_dim] f32
                 (HF LlamaModel + lm_head with a DynamicCache; past may be empty, so it serves as the "merged"
                 decoder: transformers.js feeds zero-length past tensors on the first step)

Limits (all met by one request with one image, which is what transformers.js sends for a single image):
  - Vision position ids are the identity 0..S-1, which is what HF's bucketized ids are for tiles without
    padding (test/reference/selfcheck.py checks "full masks give identity ids"). The pixel mask still masks
    padded patches as attention keys, but a partly padded tile would get different position embeddings
    than HF's.
  - HF drops all-zero padding images (batches of prompts with different image counts); this does not.
"""

import math

import torch
import torch.nn.functional as F
from torch import nn

F32_MIN = torch.finfo(torch.float32).min


class VisionLayer(nn.Module):
    """HF Idefics3EncoderLayer (pre-norm), eager attention with an additive key mask."""

    def __init__(self, d, inter, heads, eps):
        super().__init__()
        self.heads, self.eps = heads, eps
        self.layer_norm1 = nn.LayerNorm(d, eps=eps)
        self.layer_norm2 = nn.LayerNorm(d, eps=eps)
        self.q_proj, self.k_proj, self.v_proj, self.out_proj = (nn.Linear(d, d) for _ in range(4))
        self.fc1 = nn.Linear(d, inter)
        self.fc2 = nn.Linear(inter, d)

    def forward(self, x, key_bias):
        n, s, d = x.shape
        hd = d // self.heads
        h = self.layer_norm1(x)
        q = self.q_proj(h).reshape(n, s, self.heads, hd).transpose(1, 2)
        k = self.k_proj(h).reshape(n, s, self.heads, hd).transpose(1, 2)
        v = self.v_proj(h).reshape(n, s, self.heads, hd).transpose(1, 2)
        scores = torch.matmul(q, k.transpose(2, 3)) * (hd ** -0.5) + key_bias
        p = torch.softmax(scores, dim=-1)
        o = torch.matmul(p, v).transpose(1, 2).reshape(n, s, d)
        x = x + self.out_proj(o)
        h = self.layer_norm2(x)
        return x + self.fc2(F.gelu(self.fc1(h), approximate='tanh'))


class VisionEncoder(nn.Module):
    def __init__(self, config):
        super().__init__()
        v = config['vision_config']
        d, self.patch = v['hidden_size'], v['patch_size']
        self.num_positions = (v['image_size'] // self.patch) ** 2
        self.patch_embedding = nn.Conv2d(v.get('num_channels', 3), d, self.patch, self.patch)
        self.position_embedding = nn.Embedding(self.num_positions, d)
        self.layers = nn.ModuleList(
            VisionLayer(d, v['intermediate_size'], v['num_attention_heads'], v['layer_norm_eps'])
            for _ in range(v['num_hidden_layers']))
        self.post_layernorm = nn.LayerNorm(d, eps=v['layer_norm_eps'])
        self.scale = config['scale_factor']
        self.proj = nn.Linear(d * self.scale ** 2, config['text_config']['hidden_size'], bias=False)

    def load(self, W, prefix='model.vision_model.'):
        sd = {
            'patch_embedding.weight': W[prefix + 'embeddings.patch_embedding.weight'],
            'patch_embedding.bias': W[prefix + 'embeddings.patch_embedding.bias'],
            'position_embedding.weight': W[prefix + 'embeddings.position_embedding.weight'],
            'post_layernorm.weight': W[prefix + 'post_layernorm.weight'],
            'post_layernorm.bias': W[prefix + 'post_layernorm.bias'],
            'proj.weight': W['model.connector.modality_projection.proj.weight'],
        }
        for i in range(len(self.layers)):
            p = f'{prefix}encoder.layers.{i}.'
            for ours, hf in [('layer_norm1', 'layer_norm1'), ('layer_norm2', 'layer_norm2'), ('q_proj', 'self_attn.q_proj'),
                             ('k_proj', 'self_attn.k_proj'), ('v_proj', 'self_attn.v_proj'),
                             ('out_proj', 'self_attn.out_proj'), ('fc1', 'mlp.fc1'), ('fc2', 'mlp.fc2')]:
                for t in ('weight', 'bias'):
                    sd[f'layers.{i}.{ours}.{t}'] = W[f'{p}{hf}.{t}']
        self.load_state_dict({k: v.float() for k, v in sd.items()}, strict=True)

    def pixel_shuffle(self, x):
        """HF Idefics3Connector.pixel_shuffle, step for step."""
        bsz, seq, embed_dim = x.shape
        height = width = int(seq ** 0.5)
        r = self.scale
        x = x.view(bsz, height, width, embed_dim)
        x = x.view(bsz, height, int(width / r), embed_dim * r)
        x = x.permute(0, 2, 1, 3)
        x = x.reshape(bsz, int(width / r), int(height / r), embed_dim * (r ** 2))
        x = x.permute(0, 2, 1, 3)
        return x.reshape(bsz, int(seq / (r ** 2)), embed_dim * (r ** 2))

    def forward(self, pixel_values, pixel_attention_mask):
        c, h, w = pixel_values.shape[-3:]
        px = pixel_values.reshape(-1, c, h, w)
        n = px.shape[0]
        nh, nw = h // self.patch, w // self.patch
        # A patch is a valid attention key when any of its pixels is real (HF patch_attention_mask).
        m = pixel_attention_mask.reshape(n, nh, self.patch, nw, self.patch).to(torch.float32).sum(dim=(2, 4)) > 0
        key_bias = (1.0 - m.reshape(n, 1, 1, nh * nw).to(torch.float32)) * F32_MIN
        x = self.patch_embedding(px).flatten(2).transpose(1, 2)  # [n, S, D], patches row-major
        x = x + self.position_embedding.weight[None, : nh * nw]  # identity position ids (full tiles)
        for layer in self.layers:
            x = layer(x, key_bias)
        x = self.post_layernorm(x)
        return self.proj(self.pixel_shuffle(x))


class EmbedTokens(nn.Module):
    def __init__(self, config):
        super().__init__()
        t = config['text_config']
        self.embed_tokens = nn.Embedding(t['vocab_size'], t['hidden_size'])

    def load(self, W):
        self.embed_tokens.weight.data.copy_(W['model.text_model.embed_tokens.weight'].float())

    def forward(self, input_ids):
        return self.embed_tokens(input_ids)


class RmsNorm(nn.Module):
    """HF LlamaRMSNorm: x * rsqrt(mean(x^2) + eps) * w."""

    def __init__(self, d, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))
        self.eps = eps

    def forward(self, x):
        var = x.pow(2).mean(-1, keepdim=True)
        return self.weight * (x * torch.rsqrt(var + self.eps))


def rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat((-x[..., h:], x[..., :h]), dim=-1)


class DecoderLayer(nn.Module):
    """HF LlamaDecoderLayer with GQA (repeat_kv) and an appended KV cache."""

    def __init__(self, t):
        super().__init__()
        d, self.heads, self.kv_heads = t['hidden_size'], t['num_attention_heads'], t['num_key_value_heads']
        self.hd = t.get('head_dim') or d // self.heads
        self.input_layernorm = RmsNorm(d, t['rms_norm_eps'])
        self.post_attention_layernorm = RmsNorm(d, t['rms_norm_eps'])
        self.q_proj = nn.Linear(d, self.heads * self.hd, bias=False)
        self.k_proj = nn.Linear(d, self.kv_heads * self.hd, bias=False)
        self.v_proj = nn.Linear(d, self.kv_heads * self.hd, bias=False)
        self.o_proj = nn.Linear(self.heads * self.hd, d, bias=False)
        self.gate_proj = nn.Linear(d, t['intermediate_size'], bias=False)
        self.up_proj = nn.Linear(d, t['intermediate_size'], bias=False)
        self.down_proj = nn.Linear(t['intermediate_size'], d, bias=False)

    def forward(self, x, cos, sin, mask_bias, past_k, past_v):
        b, s, _ = x.shape
        h = self.input_layernorm(x)
        q = self.q_proj(h).view(b, s, self.heads, self.hd).transpose(1, 2)
        k = self.k_proj(h).view(b, s, self.kv_heads, self.hd).transpose(1, 2)
        v = self.v_proj(h).view(b, s, self.kv_heads, self.hd).transpose(1, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        k = torch.cat([past_k, k], dim=2)
        v = torch.cat([past_v, v], dim=2)
        present_k, present_v = k, v
        g = self.heads // self.kv_heads
        t = k.shape[2]
        k = k[:, :, None].expand(b, self.kv_heads, g, t, self.hd).reshape(b, self.heads, t, self.hd)
        v = v[:, :, None].expand(b, self.kv_heads, g, t, self.hd).reshape(b, self.heads, t, self.hd)
        scores = torch.matmul(q, k.transpose(2, 3)) * (self.hd ** -0.5) + mask_bias
        p = torch.softmax(scores, dim=-1)
        o = torch.matmul(p, v).transpose(1, 2).reshape(b, s, self.heads * self.hd)
        x = x + self.o_proj(o)
        h = self.post_attention_layernorm(x)
        x = x + self.down_proj(F.silu(self.gate_proj(h)) * self.up_proj(h))
        return x, present_k, present_v


class Decoder(nn.Module):
    def __init__(self, config):
        super().__init__()
        t = config['text_config']
        if t.get('rope_scaling'):
            raise ValueError('rope_scaling is not supported by this export')
        self.layers = nn.ModuleList(DecoderLayer(t) for _ in range(t['num_hidden_layers']))
        self.norm = RmsNorm(t['hidden_size'], t['rms_norm_eps'])
        self.lm_head = nn.Linear(t['hidden_size'], t['vocab_size'], bias=False)
        hd = self.layers[0].hd
        # HF LlamaRotaryEmbedding: float32 inv_freq = 1 / theta^(arange(0, hd, 2) / hd).
        inv_freq = 1.0 / (t.get('rope_theta', 10000.0) ** (torch.arange(0, hd, 2, dtype=torch.int64).float() / hd))
        self.register_buffer('inv_freq', inv_freq, persistent=False)
        self.tied = bool(config.get('tie_word_embeddings', t.get('tie_word_embeddings', False)))

    def load(self, W):
        sd = {'norm.weight': W['model.text_model.norm.weight'],
              'lm_head.weight': W['model.text_model.embed_tokens.weight'] if self.tied else W['lm_head.weight']}
        for i in range(len(self.layers)):
            p = f'model.text_model.layers.{i}.'
            for n in ('input_layernorm', 'post_attention_layernorm'):
                sd[f'layers.{i}.{n}.weight'] = W[f'{p}{n}.weight']
            for n in ('q_proj', 'k_proj', 'v_proj', 'o_proj'):
                sd[f'layers.{i}.{n}.weight'] = W[f'{p}self_attn.{n}.weight']
            for n in ('gate_proj', 'up_proj', 'down_proj'):
                sd[f'layers.{i}.{n}.weight'] = W[f'{p}mlp.{n}.weight']
        self.load_state_dict({k: v.float() for k, v in sd.items()}, strict=True)

    def forward(self, inputs_embeds, attention_mask, position_ids, past, num_logits_to_keep):
        """past: flat list [k0, v0, k1, v1, ...]. Returns (logits, [present k0, v0, ...])."""
        s = inputs_embeds.shape[1]
        t = attention_mask.shape[1]
        # cos/sin [b, 1, s, hd] from position ids (HF: float32 freqs, cat(freqs, freqs)).
        freqs = position_ids[:, :, None].to(torch.float32) * self.inv_freq[None, None, :]
        emb = torch.cat((freqs, freqs), dim=-1)
        cos, sin = emb.cos()[:, None], emb.sin()[:, None]
        # Causal + padding mask over cache positions: query i (absolute t - s + i) sees key j <= it.
        q_pos = torch.arange(s, dtype=torch.int64)[:, None] + (t - s)
        k_pos = torch.arange(t, dtype=torch.int64)[None, :]
        allowed = (k_pos <= q_pos)[None, None] & (attention_mask[:, None, None, :] > 0)
        mask_bias = (1.0 - allowed.to(torch.float32)) * F32_MIN
        x = inputs_embeds
        present = []
        for i, layer in enumerate(self.layers):
            x, k, v = layer(x, cos, sin, mask_bias, past[2 * i], past[2 * i + 1])
            present += [k, v]
        x = self.norm(x)
        # HF logits_to_keep: 0 keeps every position (slice(-0, None) == everything).
        x = x[:, -num_logits_to_keep:, :]
        return self.lm_head(x), present


def kv_shape(config):
    t = config['text_config']
    return t['num_hidden_layers'], t['num_key_value_heads'], t.get('head_dim') or t['hidden_size'] // t['num_attention_heads']


def fan_in_check(config):
    """The export assumes HF's default activations; fail loudly on anything else."""
    v, t = config['vision_config'], config['text_config']
    if v.get('hidden_act', 'gelu_pytorch_tanh') != 'gelu_pytorch_tanh' or t.get('hidden_act', 'silu') != 'silu':
        raise ValueError('this export supports gelu_pytorch_tanh (vision) and silu (text) only')
    if math.isqrt((v['image_size'] // v['patch_size']) ** 2) % config['scale_factor']:
        raise ValueError('patch grid not divisible by scale_factor')
