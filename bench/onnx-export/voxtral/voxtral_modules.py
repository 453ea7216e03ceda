"""The audio encoder module exported for transformers.js's VoxtralForConditionalGeneration (see ../README.md).

Same math as the project's float64 reference (test/reference/voxtral.py `encoder` + `projector`; voxtral_export.py
checks it before exporting), written with the ops HF's modeling code uses (nn.Conv1d, nn.LayerNorm, softmax,
F.gelu exact), so the graph looks like an ordinary HF/optimum export and onnxruntime gets its usual kernels.

  AudioEncoder  audio_values [num_chunks, mel, 3000] f32 (log-mel of each 30 s chunk, WhisperFeatureExtractor)
                -> audio_features [num_chunks * 375, text_hidden] f32
                (HF VoxtralForConditionalGeneration.get_audio_features: VoxtralEncoder (Whisper encoder) ->
                reshape to rows of intermediate_size (4 frames) -> multi_modal_projector)

The decoder and the token embeddings are ../modules.py's Decoder and EmbedTokens, loaded through
`text_weights` (language_model.model.* -> model.text_model.*, language_model.lm_head -> lm_head).
"""

import torch
import torch.nn.functional as F
from torch import nn


class AudioLayer(nn.Module):
    """HF WhisperEncoderLayer / VoxtralEncoderLayer (pre-norm): q scaled by head_dim^-0.5, k without bias."""

    def __init__(self, d, inter, heads):
        super().__init__()
        self.heads = heads
        self.self_attn_layer_norm = nn.LayerNorm(d, eps=1e-5)
        self.final_layer_norm = nn.LayerNorm(d, eps=1e-5)
        self.q_proj = nn.Linear(d, d)
        self.k_proj = nn.Linear(d, d, bias=False)
        self.v_proj = nn.Linear(d, d)
        self.out_proj = nn.Linear(d, d)
        self.fc1 = nn.Linear(d, inter)
        self.fc2 = nn.Linear(inter, d)

    def forward(self, x):
        n, s, d = x.shape
        hd = d // self.heads
        h = self.self_attn_layer_norm(x)
        q = (self.q_proj(h) * (hd ** -0.5)).reshape(n, s, self.heads, hd).transpose(1, 2)
        k = self.k_proj(h).reshape(n, s, self.heads, hd).transpose(1, 2)
        v = self.v_proj(h).reshape(n, s, self.heads, hd).transpose(1, 2)
        p = torch.softmax(torch.matmul(q, k.transpose(2, 3)), dim=-1)
        o = torch.matmul(p, v).transpose(1, 2).reshape(n, s, d)
        x = x + self.out_proj(o)
        h = self.final_layer_norm(x)
        return x + self.fc2(F.gelu(self.fc1(h)))


class AudioEncoder(nn.Module):
    def __init__(self, config, linear_1_shape, linear_2_shape):
        super().__init__()
        a = config['audio_config']
        d = a['hidden_size']
        self.conv1 = nn.Conv1d(a['num_mel_bins'], d, 3, padding=1)
        self.conv2 = nn.Conv1d(d, d, 3, stride=2, padding=1)
        self.embed_positions = nn.Parameter(torch.zeros(a['max_source_positions'], d))
        self.layers = nn.ModuleList(
            AudioLayer(d, a['intermediate_size'], a['num_attention_heads']) for _ in range(a['num_hidden_layers']))
        self.layer_norm = nn.LayerNorm(d, eps=1e-5)
        # The projector reads the encoder output as rows of intermediate_size (= 4 frames of d for Voxtral).
        self.row = a['intermediate_size']
        self.linear_1 = nn.Linear(linear_1_shape[1], linear_1_shape[0], bias=False)
        self.linear_2 = nn.Linear(linear_2_shape[1], linear_2_shape[0], bias=False)

    def load(self, W):
        p = 'audio_tower.'
        sd = {'embed_positions': W[p + 'embed_positions.weight'],
              'linear_1.weight': W['multi_modal_projector.linear_1.weight'],
              'linear_2.weight': W['multi_modal_projector.linear_2.weight']}
        for n in ('conv1', 'conv2', 'layer_norm'):
            for t in ('weight', 'bias'):
                sd[f'{n}.{t}'] = W[f'{p}{n}.{t}']
        for i in range(len(self.layers)):
            q = f'{p}layers.{i}.'
            for ours, hf in [('self_attn_layer_norm', 'self_attn_layer_norm'), ('final_layer_norm', 'final_layer_norm'),
                             ('q_proj', 'self_attn.q_proj'), ('v_proj', 'self_attn.v_proj'),
                             ('out_proj', 'self_attn.out_proj'), ('fc1', 'fc1'), ('fc2', 'fc2')]:
                for t in ('weight', 'bias'):
                    sd[f'layers.{i}.{ours}.{t}'] = W[f'{q}{hf}.{t}']
            sd[f'layers.{i}.k_proj.weight'] = W[f'{q}self_attn.k_proj.weight']
        self.load_state_dict({k: v.float() for k, v in sd.items()}, strict=True)

    def forward(self, audio_values):
        x = F.gelu(self.conv1(audio_values))
        x = F.gelu(self.conv2(x)).transpose(1, 2)  # [n, S, D]
        x = x + self.embed_positions[None]
        for layer in self.layers:
            x = layer(x)
        x = self.layer_norm(x)
        rows = x.reshape(-1, self.row)  # HF get_audio_features: [n * S / 4, 4 D]
        return self.linear_2(F.gelu(self.linear_1(rows)))


def text_weights(W):
    """The checkpoint's language_model.* names as ../modules.py (and test/reference/decoder.py) read them."""
    out = {}
    for k, v in W.items():
        if k.startswith('language_model.model.'):
            out['model.text_model.' + k[len('language_model.model.'):]] = v
        elif k == 'language_model.lm_head.weight':
            out['lm_head.weight'] = v
    return out


def fan_in_check(config):
    """The export assumes Voxtral's activations and the 4-frame projector; fail loudly on anything else."""
    a, t = config['audio_config'], config['text_config']
    if a.get('activation_function', 'gelu') != 'gelu' or config.get('projector_hidden_act', 'gelu') != 'gelu':
        raise ValueError('this export supports exact gelu in the audio tower and projector only')
    if t.get('hidden_act', 'silu') != 'silu' or t.get('attention_bias') or t.get('mlp_bias'):
        raise ValueError('this export supports a silu Llama decoder without biases only')
    if (a['max_source_positions'] * a['hidden_size']) % a['intermediate_size']:
        raise ValueError('encoder frames * hidden not divisible by the projector row (intermediate_size)')
