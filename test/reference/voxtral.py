"""Float64 PyTorch reference of Voxtral (HF `VoxtralForConditionalGeneration`), written from the math of
transformers' models/voxtral/modeling_voxtral.py (not copied): the Whisper encoder (`VoxtralEncoder`: conv1
k3 p1 + GELU, conv2 k3 s2 p1 + GELU, + learned positions, pre-LN layers whose attention scales q by
head_dim^-0.5 before Q K^T and has no k bias, exact-erf GELU MLP, final LayerNorm), the projector
(`get_audio_features`: the encoder output read as rows of intermediate_size, then linear_1 -> GELU ->
linear_2, no biases), the splice at [AUDIO] (masked_scatter: rows in order) and the Llama decoder of
decoder.py (checkpoint names under language_model.*), then greedy decoding.

Features: as HF's VoxtralProcessor and vLLM make them, the log-mel of the whole clip zero-padded to whole
30-second chunks (log_mel.py), cut into 3000-frame chunks (`whole_clip_features`): the max - 8 floor is the
clip's, and the frames at each chunk edge read the neighbouring chunk's samples. Tessera makes the same by
default. `chunk_features` (each chunk's log-mel alone, Tessera's opt-in 'per-chunk' features) runs too: the
manifest records how far its features and its greedy tokens are from the whole clip's.

Prompts (mistral-common's Tekken v7 rules, see src/processor/voxtral-prompt.ts): transcription
  <s> [INST] [BEGIN_AUDIO] [AUDIO]*n [/INST] lang:en [TRANSCRIBE]
and chat  <s> [INST] [BEGIN_AUDIO] [AUDIO]*n <text> [/INST], n = 375 per started 30 s chunk (the projector's
tokens per chunk for these configs).

    /usr/bin/python3 test/reference/voxtral.py
"""
import hashlib
import json
import math
import os

import numpy as np
import torch

import decoder
import log_mel
import safetensors_io

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))
MODELS = os.path.join(ROOT, 'public', 'models')
OUT = os.path.join(ROOT, 'test', 'fixtures', 'goldens', 'audio')
F64, F32 = torch.float64, torch.float32
SR = 16000
CHUNK = 480000
MAX_NEW = 20
STOP_IDS = (2,)  # </s>
BOS, INST, END_INST, AUDIO, BEGIN_AUDIO, TRANSCRIBE = 1, 3, 4, 24, 25, 34

torch.set_num_threads(max(1, os.cpu_count() or 1))


def layer_norm(x, w, b, eps=1e-5):
    mu = x.mean(dim=-1, keepdim=True)
    var = ((x - mu) ** 2).mean(dim=-1, keepdim=True)
    return (x - mu) / torch.sqrt(var + eps) * w + b


def gelu(x):
    return 0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0)))


def conv1d(x, w, b, stride):
    """x [C, T], w [D, C, 3]: torch Conv1d(k=3, padding=1) written as the sum over the 3 taps."""
    C, T = x.shape
    xp = torch.nn.functional.pad(x, (1, 1))
    t_out = (T + 2 - 3) // stride + 1
    y = b[:, None].expand(-1, t_out).clone()
    for j in range(3):
        taps = xp[:, j: j + stride * (t_out - 1) + 1: stride]  # [C, Tout]
        y = y + w[:, :, j] @ taps
    return y  # [D, Tout]


def encoder(features, W, a, dtype):
    """features [mel, 2S] -> [S, D] (one chunk)."""
    p = 'audio_tower.'
    g = lambda n: W[p + n].to(dtype)
    x = gelu(conv1d(features.to(dtype), g('conv1.weight'), g('conv1.bias'), 1))
    x = gelu(conv1d(x, g('conv2.weight'), g('conv2.bias'), 2)).t()  # [S, D]
    h = x + g('embed_positions.weight')
    D = a['hidden_size']
    heads = a['num_attention_heads']
    hd = D // heads
    for i in range(a['num_hidden_layers']):
        q_ = f'layers.{i}.'
        y = layer_norm(h, g(q_ + 'self_attn_layer_norm.weight'), g(q_ + 'self_attn_layer_norm.bias'))
        q = (y @ g(q_ + 'self_attn.q_proj.weight').t() + g(q_ + 'self_attn.q_proj.bias')) * hd ** -0.5
        k = y @ g(q_ + 'self_attn.k_proj.weight').t()
        v = y @ g(q_ + 'self_attn.v_proj.weight').t() + g(q_ + 'self_attn.v_proj.bias')
        S = h.shape[0]
        q, k, v = (t.reshape(S, heads, hd).transpose(0, 1) for t in (q, k, v))
        att = torch.softmax(q @ k.transpose(1, 2), dim=-1) @ v  # [heads, S, hd]
        att = att.transpose(0, 1).reshape(S, D)
        h = h + att @ g(q_ + 'self_attn.out_proj.weight').t() + g(q_ + 'self_attn.out_proj.bias')
        y = layer_norm(h, g(q_ + 'final_layer_norm.weight'), g(q_ + 'final_layer_norm.bias'))
        m = gelu(y @ g(q_ + 'fc1.weight').t() + g(q_ + 'fc1.bias'))
        h = h + m @ g(q_ + 'fc2.weight').t() + g(q_ + 'fc2.bias')
    return layer_norm(h, g('layer_norm.weight'), g('layer_norm.bias'))


def projector(tower, W, a, dtype):
    """tower [chunks * S, D] -> [chunks * S / k, H]."""
    rows = tower.reshape(-1, a['intermediate_size'])
    h = gelu(rows @ W['multi_modal_projector.linear_1.weight'].to(dtype).t())
    return h @ W['multi_modal_projector.linear_2.weight'].to(dtype).t()


def chunk_features(pcm, n_mels):
    """Per-chunk features: [chunks, mel, 3000], the clip zero-padded to whole 30 s chunks."""
    n = max(1, math.ceil(len(pcm) / CHUNK))
    return np.stack([log_mel.log_mel(pcm[i * CHUNK:(i + 1) * CHUNK], n_mels) for i in range(n)])


def whole_clip_features(pcm, n_mels):
    """HF VoxtralProcessor / vLLM: the log-mel of the whole padded clip, cut into 3000-frame chunks."""
    n = max(1, math.ceil(len(pcm) / CHUNK))
    feats = log_mel.log_mel(pcm, n_mels, n_samples=n * CHUNK)  # [mel, 3000 n]
    return np.stack([feats[:, i * 3000:(i + 1) * 3000] for i in range(n)])


def vocab_ids(model_dir, *pieces):
    with open(os.path.join(model_dir, 'tokenizer.json'), encoding='utf-8') as f:
        vocab = json.load(f)['model']['vocab']
    return [vocab[p] for p in pieces]


def sha(b):
    return hashlib.sha256(b).hexdigest()


def transcribe(feats, W, a, text_w, c, model_dir, dtype):
    towers = [encoder(torch.from_numpy(f), W, a, dtype) for f in feats]
    tower = torch.cat(towers, dim=0)
    embeds = projector(tower, W, a, dtype)
    n = embeds.shape[0]
    lang = vocab_ids(model_dir, 'lang', ':', 'en')
    ids = [BOS, INST, BEGIN_AUDIO] + [AUDIO] * n + [END_INST] + lang + [TRANSCRIBE]
    x = decoder.splice_images(decoder.embed(ids, text_w, dtype), ids, embeds, AUDIO)
    tokens, logits, stopped = decoder.greedy(x, text_w, c, dtype, MAX_NEW, STOP_IDS)
    return dict(tower=tower, embeds=embeds, ids=ids, tokens=tokens, logits=logits, stopped=stopped)


def run(case, name, seconds, manifest, quiet=False):
    model_dir = os.path.join(MODELS, name)
    with open(os.path.join(model_dir, 'config.json')) as f:
        config = json.load(f)
    with open(os.path.join(MODELS, 'manifest.json')) as f:
        expected = json.load(f)[name]
    for fn, want in expected.items():
        got = safetensors_io.sha256_file(os.path.join(model_dir, fn))
        if got != want:
            raise SystemExit(f'{name}/{fn}: sha256 {got} differs from public/models/manifest.json; rerun `npm run make:tiny`')
    a = config['audio_config']
    W, _, _ = safetensors_io.load_checkpoint(model_dir)
    text_w = {}
    for k, v in W.items():
        if k.startswith('language_model.model.'):
            text_w['model.text_model.' + k[len('language_model.model.'):]] = v
        elif k == 'language_model.lm_head.weight':
            text_w['lm_head.weight'] = v
        else:
            text_w[k] = v
    c = decoder.TextConfig({**config, 'image_token_id': config['audio_token_id']})
    pcm = log_mel.quiet_clip(seconds, SR) if quiet else log_mel.clip(seconds, SR)
    feats = whole_clip_features(pcm, a['num_mel_bins'])
    per_chunk = chunk_features(pcm, a['num_mel_bins'])
    results = {dtype: transcribe(feats, W, a, text_w, c, model_dir, dtype) for dtype in (F64, F32)}
    r, r32 = results[F64], results[F32]
    per_chunk_tokens = transcribe(per_chunk, W, a, text_w, c, model_dir, F64)['tokens']
    whole_diff = float(np.abs(per_chunk - feats).max())
    files = {}

    def write(suffix, arr, what):
        raw = np.ascontiguousarray(arr, dtype='<f4').tobytes()
        fn = f'{case}-{suffix}.f32.bin'
        with open(os.path.join(OUT, fn), 'wb') as f:
            f.write(raw)
        files[fn] = {'shape': list(arr.shape), 'sha256': sha(raw), 'what': what}

    S = a['max_source_positions']
    write('tower-chunk0', r['tower'][:S].numpy(), 'encoder output (after its final LayerNorm) of chunk 0 [S, D]')
    write('embeds', r['embeds'].numpy(), 'projector output [chunks * tokens per chunk, text hidden]: row k fills the k-th [AUDIO]')
    write('logits-step0', r['logits'][0].numpy(), 'logits at the last prompt position of the transcription prompt')
    gaps = [float(torch.topk(l, 2).values[0] - torch.topk(l, 2).values[1]) for l in r['logits']]
    same = next((i for i, (x, y) in enumerate(zip(per_chunk_tokens, r['tokens'])) if x != y), min(len(per_chunk_tokens), len(r['tokens'])))
    manifest['cases'][case] = {
        'model': name,
        'clip': 'quiet after 30.5 s' if quiet else 'test clip',
        'features': 'whole clip',
        'seconds': seconds,
        'chunks': int(feats.shape[0]),
        'prompt': 'transcription, language en',
        'prompt_ids_head': r['ids'][:4],
        'prompt_ids_tail': r['ids'][-6:],
        'audio_tokens': int(r['embeds'].shape[0]),
        'prompt_length': len(r['ids']),
        'greedy': r['tokens'],
        'stopped_at': r['stopped'],
        'min_top2_gap': min(gaps),
        'f32_vs_f64': {
            'tower_max_abs': float((r['tower'] - r32['tower'].to(F64)).abs().max()),
            'embeds_max_abs': float((r['embeds'] - r32['embeds'].to(F64)).abs().max()),
            'logits0_max_abs': float((r['logits'][0] - r32['logits'][0].to(F64)).abs().max()),
            'same_greedy': r['tokens'] == r32['tokens'],
        },
        'per_chunk_vs_whole_clip_features_max_abs': whole_diff,
        'per_chunk_greedy': per_chunk_tokens,
        'per_chunk_greedy_equal_before': same,
        'files': files,
        'checkpoint': {f'public/models/{name}/{fn}': s for fn, s in expected.items()},
    }
    print(f"{case}: {seconds} s, {feats.shape[0]} chunk(s), {r['embeds'].shape[0]} audio tokens, greedy {r['tokens'][:8]}..., "
          f"min gap {min(gaps):.3f}, f32 same greedy {r['tokens'] == r32['tokens']}, per-chunk feature diff {whole_diff:.3g}, "
          f"per-chunk greedy equal for {same} of {len(r['tokens'])} tokens")


def main():
    os.makedirs(OUT, exist_ok=True)
    manifest = {
        'description': 'Float64 Voxtral goldens (test/reference/voxtral.py) on the tiny checkpoints of scripts/make-tiny-audio.ts, '
        'for the clips test/helpers/audio-clips.ts makes; little-endian f32.',
        'regenerate': ['npx tsx scripts/make-tiny.ts', '/usr/bin/python3 test/reference/voxtral.py'],
        'cases': {},
    }
    run('voxtral-tiny', 'voxtral-tiny', 5.0, manifest)
    run('voxtral-tiny-odd', 'voxtral-tiny-odd', 35.0, manifest)
    run('voxtral-tiny-41s-quiet', 'voxtral-tiny', 41.0, manifest, quiet=True)
    with open(os.path.join(OUT, 'voxtral.json'), 'w') as f:
        json.dump(manifest, f, indent=2)
        f.write('\n')


if __name__ == '__main__':
    main()
