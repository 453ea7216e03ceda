"""Writes the committed goldens in test/fixtures/goldens/ from the independent PyTorch reference.

Run from the repository root (Debian's system Python has torch/numpy/PIL):
    npx tsx test/reference/make-input.ts          # only if tiny-input.json must be remade (needs node)
    /usr/bin/python3 test/reference/make_goldens.py

Every model golden is computed twice, in float64 (written) and float32 (compared, the difference recorded in
the manifest as f32_vs_f64_max_abs_diff), and the greedy tokens must agree between the two and between the
KV-cache and full-recompute decoders. See README.md for the list of goldens.
"""

import hashlib
import json
import os
import platform
import sys
import time

import numpy as np
import torch
from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # keep test/reference free of __pycache__

import connector  # noqa: E402
import decoder  # noqa: E402
import image_processor  # noqa: E402
import safetensors_io  # noqa: E402
import selfcheck  # noqa: E402
import vision  # noqa: E402

ROOT = os.path.abspath(os.path.join(HERE, '..', '..'))
OUT = os.path.join(ROOT, 'test', 'fixtures', 'goldens')
MODELS = os.path.join(ROOT, 'public', 'models')
SAMPLE = os.path.join(ROOT, 'public', 'sample.png')
REAL_EMB = os.path.join(ROOT, 'test', 'fixtures', 'models', 'SmolVLM2-500M-Video-Instruct-vision-embeddings',
                        'vision_embeddings.safetensors')
MAX_NEW = 20
STOP_IDS = (49279, 2)  # <end_of_utterance>, </s>
F64, F32 = torch.float64, torch.float32

torch.set_num_threads(max(1, os.cpu_count() or 1))
manifest_files = {}


def rel(p):
    return os.path.relpath(p, ROOT)


def sha256_bytes(b):
    return hashlib.sha256(b).hexdigest()


def write(name, array, dtype, description, sources, extra=None):
    arr = np.ascontiguousarray(array)
    if dtype == 'f32':
        arr = arr.astype('<f4')
    elif dtype == 'u8':
        arr = arr.astype(np.uint8)
    elif dtype == 'i32':
        arr = arr.astype('<i4')
    raw = arr.tobytes()
    with open(os.path.join(OUT, name), 'wb') as f:
        f.write(raw)
    entry = {'shape': list(arr.shape), 'dtype': dtype, 'bytes': len(raw), 'sha256': sha256_bytes(raw),
             'description': description, 'sources': sources}
    if extra:
        entry.update(extra)
    manifest_files[name] = entry


def checkpoint_sources(model):
    """sha256 of each checkpoint file, from public/models/manifest.json, verified against the files on disk."""
    with open(os.path.join(MODELS, 'manifest.json')) as f:
        expected = json.load(f)[model]
    out = {}
    for fn, sha in expected.items():
        actual = safetensors_io.sha256_file(os.path.join(MODELS, model, fn))
        if actual != sha:
            raise SystemExit(f'{model}/{fn}: sha256 {actual} differs from public/models/manifest.json ({sha}); '
                             'rerun `npm run make:tiny`')
        out[f'public/models/{model}/{fn}'] = sha
    return out


def load_json(p):
    with open(p) as f:
        return json.load(f)


def max_diff(a, b):
    return float((a.to(F64) - b.to(F64)).abs().max())


def top2_gap(logits):
    v = torch.topk(logits.to(F64), 2).values
    return float(v[0] - v[1])


def run_model(model_dir, ids, pixel_values, pixel_mask, dtype):
    config = load_json(os.path.join(model_dir, 'config.json'))
    W, files, wdtypes = safetensors_io.load_checkpoint(model_dir)
    vcfg = config['vision_config']
    c = decoder.TextConfig(config)
    vis, kept = vision.vision_tower(torch.from_numpy(pixel_values), torch.from_numpy(pixel_mask), W, vcfg, dtype)
    img = connector.connector(vis, W, config['scale_factor'], dtype)
    img_flat = img.reshape(-1, img.shape[-1])
    x = decoder.splice_images(decoder.embed(ids, W, dtype), ids, img_flat, c.image_token_id)
    tokens, step_logits, stopped = decoder.greedy(x, W, c, dtype, MAX_NEW, STOP_IDS)
    return {'config': config, 'text': c, 'W': W, 'files': files, 'weight_dtypes': sorted(wdtypes), 'vision': vis,
            'kept': kept, 'connector': img_flat, 'prompt_embeds': x, 'tokens': tokens, 'step_logits': step_logits,
            'stopped': stopped}


def recompute_greedy(r, ids, dtype):
    """Greedy without KV cache: full forward over prompt + generated tokens at every step (images spliced only
    into the prompt positions). Returns (tokens, per-step logits)."""
    c, W = r['text'], r['W']
    head = decoder.lm_head_weight(W, c, dtype)
    seq = r['prompt_embeds']
    tokens, logits_steps = [], []
    for _ in range(MAX_NEW):
        h = decoder.forward(seq, W, c, dtype)
        logits = h[-1] @ head.t()
        logits_steps.append(logits)
        tok = int(torch.argmax(logits))
        tokens.append(tok)
        if tok in STOP_IDS:
            break
        seq = torch.cat([seq, decoder.embed([tok], W, dtype)])
    return tokens, logits_steps


def greedy_summary(r64, r32, rec):
    gaps64 = [top2_gap(l) for l in r64['step_logits']]
    gaps32 = [top2_gap(l) for l in r32['step_logits']]
    if r64['tokens'] != r32['tokens']:
        raise SystemExit(f"greedy tokens differ f64 {r64['tokens']} vs f32 {r32['tokens']}")
    if rec[0] != r64['tokens']:
        raise SystemExit(f"greedy tokens differ KV-cache {r64['tokens']} vs recompute {rec[0]}")
    step_diff = max(max_diff(a, b) for a, b in zip(r64['step_logits'], r32['step_logits']))
    rec_diff = max(max_diff(a, b) for a, b in zip(r64['step_logits'], rec[1]))
    return {
        'tokens': r64['tokens'],
        'num_tokens': len(r64['tokens']),
        'stopped_at_step': r64['stopped'],
        'stop_reason': (f"token {r64['tokens'][-1]} at step {r64['stopped']}" if r64['stopped'] is not None
                        else f'no stop token within {MAX_NEW} steps'),
        'stop_ids': list(STOP_IDS),
        'top1_top2_gap_per_step': [round(g, 6) for g in gaps64],
        'min_top1_top2_gap': min(gaps64),
        'min_top1_top2_gap_step': int(np.argmin(gaps64)),
        'min_top1_top2_gap_f32': min(gaps32),
        'max_step_logit_diff_f32_vs_f64': step_diff,
        'max_step_logit_diff_kvcache_vs_recompute_f64': rec_diff,
    }


# Checkpoint -> its prompt ids file (made by make-input.ts; the ones with smolvlm-tiny's processor share its ids).
VARIANTS = [
    ('smolvlm-tiny-so400m', 'smolvlm-tiny-so400m-input.json'),
    ('smolvlm-tiny-hd128', 'tiny-input.json'),
    ('smolvlm-tiny-hd8', 'tiny-input.json'),
]


def variant_goldens(name, input_file, tiny_proc, tiny_ids):
    """Goldens of one head/patch-size variant, named <name>-*.bin. Its own tiles only when its processor
    config differs from smolvlm-tiny's (the so400m layout's 126 px tiles)."""
    model_dir = os.path.join(MODELS, name)
    inp = load_json(os.path.join(OUT, input_file))
    ids = inp['input_ids']
    pre = load_json(os.path.join(model_dir, 'preprocessor_config.json'))
    proc = image_processor.preprocess(Image.open(SAMPLE), pre)
    if proc['rows'] != inp['transformers_js']['rows'][0][0] or proc['cols'] != inp['transformers_js']['cols'][0][0]:
        raise SystemExit(f'{name}: rows/cols differ from transformers.js; the input ids would not match the tiles')
    img_src = {rel(SAMPLE): safetensors_io.sha256_file(SAMPLE)}
    own_tiles = input_file != 'tiny-input.json'
    if own_tiles:
        write(f'{name}-pixel-tiles.u8.bin', proc['tiles_uint8'], 'u8',
              f"{name} Idefics3ImageProcessor tiles of public/sample.png before rescale/normalize ({proc['rows']}x"
              f"{proc['cols']} crops row-major then the global image), as tiny-pixel-tiles.u8.bin.",
              img_src, {'rows': proc['rows'], 'cols': proc['cols'], 'resized_size': proc['resized_size'],
                        'encoder_size': proc['encoder_size']})
    else:
        assert ids == tiny_ids and np.array_equal(proc['tiles_uint8'], tiny_proc['tiles_uint8'])
    r64 = run_model(model_dir, ids, proc['pixel_values'], proc['pixel_attention_mask'], F64)
    r32 = run_model(model_dir, ids, proc['pixel_values'], proc['pixel_attention_mask'], F32)
    rec = recompute_greedy(r64, ids, F64)
    ids_sha = sha256_bytes(json.dumps(ids, separators=(',', ':')).encode())
    src = {**checkpoint_sources(name), **img_src, f'test/fixtures/goldens/{input_file}#input_ids': ids_sha}
    v = r64['config']['vision_config']
    t = r64['text']
    shape = (f"vision head_dim {v['hidden_size'] // v['num_attention_heads']}, patch {v['patch_size']}, "
             f"text head_dim {t.head_dim}")
    write(f'{name}-vision-out.f32.bin', r64['vision'].numpy(), 'f32',
          f'{name} ({shape}) vision tower output after post_layernorm [tiles, patches, hidden].',
          src, {'f32_vs_f64_max_abs_diff': max_diff(r64['vision'], r32['vision']),
                'abs_max': float(r64['vision'].abs().max())})
    write(f'{name}-connector-out.f32.bin', r64['connector'].numpy(), 'f32',
          f'{name} connector output (pixel shuffle r={r64["config"]["scale_factor"]} + Linear) [image tokens, text hidden].',
          src, {'f32_vs_f64_max_abs_diff': max_diff(r64['connector'], r32['connector']),
                'abs_max': float(r64['connector'].abs().max())})
    write(f'{name}-logits-step0.f32.bin', r64['step_logits'][0].numpy(), 'f32',
          f'{name} logits at the last prompt position [vocab].',
          src, {'f32_vs_f64_max_abs_diff': max_diff(r64['step_logits'][0], r32['step_logits'][0]),
                'argmax': int(torch.argmax(r64['step_logits'][0]))})
    g = greedy_summary(r64, r32, rec)
    g['weight_dtypes'] = r64['weight_dtypes']
    summary = {'file': f'test/fixtures/goldens/{input_file}', 'num_tokens': len(ids),
               'num_image_tokens': sum(1 for x in ids if x == t.image_token_id), 'tiles': proc['tiles_uint8'].shape[0],
               'pixel_tiles': f'{name}-pixel-tiles.u8.bin' if own_tiles else 'tiny-pixel-tiles.u8.bin'}
    return g, checkpoint_sources(name), summary


def real_embeddings_golden():
    W, _ = safetensors_io.load_file(REAL_EMB)
    W = {'model.vision_model.embeddings.' + k: v for k, v in W.items()}
    cfg = {'image_size': 512, 'patch_size': 16}
    img = Image.open(SAMPLE).convert('RGB').resize((512, 512), resample=Image.LANCZOS)
    u8 = np.array(img).transpose(2, 0, 1)[None]  # [1, 3, 512, 512]
    pv = image_processor.normalize_uint8(u8, 1 / 255, [0.5] * 3, [0.5] * 3)
    mask = torch.ones(1, 32, 32, dtype=torch.bool)
    e64 = vision.embeddings(torch.from_numpy(pv), mask, W, cfg, F64)[0]
    e32 = vision.embeddings(torch.from_numpy(pv), mask, W, cfg, F32)[0]
    src = {rel(REAL_EMB): safetensors_io.sha256_file(REAL_EMB), rel(SAMPLE): safetensors_io.sha256_file(SAMPLE)}
    write('real-vision-input-512.u8.bin', u8[0], 'u8',
          'public/sample.png resized by PIL LANCZOS (resample=1) straight to 512x512, RGB uint8, channels first '
          '[3, 512, 512]. Pixel values = (u8 * (1/255) [f64, cast f32] - 0.5) / 0.5 [f32].', src)
    write('real-vision-embeddings.f32.bin', e64.numpy(), 'f32',
          'SmolVLM2-500M vision embeddings stage on real BF16 weights: Conv2d 16x16/16 + bias, flatten/transpose '
          '(patch index = row*32 + col), + position_embedding at identity position ids (all-ones patch mask). '
          'Input: real-vision-input-512.u8.bin normalized with mean = std = 0.5. [1024 patches, 768].',
          src, {'f32_vs_f64_max_abs_diff': max_diff(e64, e32), 'abs_max': float(e64.abs().max())})


def main():
    t0 = time.time()
    os.makedirs(OUT, exist_ok=True)
    print('self-checks:')
    checks = selfcheck.run_all()

    inp = load_json(os.path.join(OUT, 'tiny-input.json'))
    ids = inp['input_ids']
    tiny_dir = os.path.join(MODELS, 'smolvlm-tiny')
    pre = load_json(os.path.join(tiny_dir, 'preprocessor_config.json'))
    proc = image_processor.preprocess(Image.open(SAMPLE), pre)
    n_tiles = proc['tiles_uint8'].shape[0]
    print(f"image: {Image.open(SAMPLE).size} -> resized {proc['resized_size']} -> encoder {proc['encoder_size']} "
          f"-> {proc['rows']}x{proc['cols']} tiles + global = {n_tiles}")
    # the normalized values are a pure function of the uint8 tiles
    assert np.array_equal(proc['pixel_values'], image_processor.normalize_uint8(
        proc['tiles_uint8'], pre['rescale_factor'], pre['image_mean'], pre['image_std']))
    if proc['rows'] != inp['transformers_js']['rows'][0][0] or proc['cols'] != inp['transformers_js']['cols'][0][0]:
        raise SystemExit('rows/cols differ from transformers.js; the input ids would not match the tiles')

    tiny_src = checkpoint_sources('smolvlm-tiny')
    tied_src = checkpoint_sources('smolvlm-tiny-tied')
    img_src = {rel(SAMPLE): safetensors_io.sha256_file(SAMPLE)}
    # sha256 of the ids as compact JSON, i.e. of JSON.stringify(input_ids) in JS
    ids_sha = sha256_bytes(json.dumps(ids, separators=(',', ':')).encode())
    ids_src = {'test/fixtures/goldens/tiny-input.json#input_ids': ids_sha}

    write('tiny-pixel-tiles.u8.bin', proc['tiles_uint8'], 'u8',
          f"Idefics3ImageProcessor (PIL, smolvlm-tiny preprocessor_config) tiles of public/sample.png before "
          f"rescale/normalize: RGB uint8 channels first, {proc['rows']}x{proc['cols']} crops row-major then the "
          f"global image. pixel_values = (u8 * rescale_factor [f64, cast f32] - mean) / std [f32].",
          img_src, {'rows': proc['rows'], 'cols': proc['cols'], 'resized_size': proc['resized_size'],
                    'encoder_size': proc['encoder_size'], 'rescale_factor': pre['rescale_factor'],
                    'image_mean': pre['image_mean'], 'image_std': pre['image_std'],
                    'pixel_attention_mask_all_ones': bool(proc['pixel_attention_mask'].all())})
    if not proc['pixel_attention_mask'].all():
        write('tiny-pixel-attention-mask.u8.bin', proc['pixel_attention_mask'], 'u8', 'pixel_attention_mask', img_src)

    print('smolvlm-tiny: float64 ...')
    r64 = run_model(tiny_dir, ids, proc['pixel_values'], proc['pixel_attention_mask'], F64)
    print('smolvlm-tiny: float32 ...')
    r32 = run_model(tiny_dir, ids, proc['pixel_values'], proc['pixel_attention_mask'], F32)
    rec = recompute_greedy(r64, ids, F64)
    src = {**tiny_src, **img_src}
    write('tiny-vision-out.f32.bin', r64['vision'].numpy(), 'f32',
          'smolvlm-tiny vision tower output after post_layernorm, per tile [tiles, patches (row-major), 128].',
          src, {'f32_vs_f64_max_abs_diff': max_diff(r64['vision'], r32['vision']),
                'abs_max': float(r64['vision'].abs().max())})
    write('tiny-connector-out.f32.bin', r64['connector'].numpy(), 'f32',
          'smolvlm-tiny connector output (pixel shuffle r=2 + Linear), tiles concatenated in order '
          '[tiles * 16, 192]; row k replaces the k-th <image> token.',
          src, {'f32_vs_f64_max_abs_diff': max_diff(r64['connector'], r32['connector']),
                'abs_max': float(r64['connector'].abs().max())})
    write('tiny-logits-step0.f32.bin', r64['step_logits'][0].numpy(), 'f32',
          'smolvlm-tiny logits at the last prompt position (first generation step) [vocab].',
          {**src, **ids_src}, {'f32_vs_f64_max_abs_diff': max_diff(r64['step_logits'][0], r32['step_logits'][0]),
                               'argmax': int(torch.argmax(r64['step_logits'][0]))})
    tiny_greedy = greedy_summary(r64, r32, rec)

    print('smolvlm-tiny-tied: float64 / float32 ...')
    tied_dir = os.path.join(MODELS, 'smolvlm-tiny-tied')
    pre_t = load_json(os.path.join(tied_dir, 'preprocessor_config.json'))
    proc_t = image_processor.preprocess(Image.open(SAMPLE), pre_t)
    assert np.array_equal(proc_t['tiles_uint8'], proc['tiles_uint8'])
    t64 = run_model(tied_dir, ids, proc_t['pixel_values'], proc_t['pixel_attention_mask'], F64)
    t32 = run_model(tied_dir, ids, proc_t['pixel_values'], proc_t['pixel_attention_mask'], F32)
    trec = recompute_greedy(t64, ids, F64)
    tsrc = {**tied_src, **img_src, **ids_src}
    write('tiny-tied-logits-step0.f32.bin', t64['step_logits'][0].numpy(), 'f32',
          'smolvlm-tiny-tied (model_type smolvlm, tied lm_head = embed_tokens, F16 shards) logits at the last '
          'prompt position [vocab], same input ids and tiles.',
          tsrc, {'f32_vs_f64_max_abs_diff': max_diff(t64['step_logits'][0], t32['step_logits'][0]),
                 'argmax': int(torch.argmax(t64['step_logits'][0]))})
    tied_greedy = greedy_summary(t64, t32, trec)

    # The head- and patch-size variants (make-tiny.ts TINY_SHAPES): vision tower, connector, logits, greedy.
    variant_greedy, variant_src, variant_inputs = {}, {}, {}
    for name, input_file in VARIANTS:
        print(f'{name}: float64 / float32 ...')
        g, src, inp_summary = variant_goldens(name, input_file, proc, ids)
        variant_greedy[name], variant_src[name], variant_inputs[name] = g, src, inp_summary

    print('real SmolVLM2-500M vision embeddings ...')
    real_embeddings_golden()

    manifest = {
        'description': 'Goldens from the independent PyTorch reference in test/reference/ (see README.md there). '
                       'All model values computed in float64 from the exactly widened checkpoint weights and '
                       'stored as little-endian f32; f32_vs_f64_max_abs_diff is the same computation done in '
                       'float32 (a measure of f32 noise). RoPE cos/sin are computed in float32 as HF does.',
        'regenerate': ['npx tsx test/reference/make-input.ts', '/usr/bin/python3 test/reference/make_goldens.py'],
        'checkpoints': {'smolvlm-tiny': tiny_src, 'smolvlm-tiny-tied': tied_src, **variant_src},
        'input': {
            'file': 'test/fixtures/goldens/tiny-input.json',
            'num_tokens': len(ids),
            'num_image_tokens': sum(1 for t in ids if t == r64['text'].image_token_id),
            'image_token_id': r64['text'].image_token_id,
            'tiles': n_tiles,
            'input_ids_sha256': ids_sha,
            'input_ids_sha256_of': 'JSON.stringify(input_ids) (compact JSON)',
        },
        'variant_inputs': variant_inputs,
        'greedy': {'smolvlm-tiny': tiny_greedy, 'smolvlm-tiny-tied': tied_greedy, **variant_greedy},
        'weight_dtypes': {'smolvlm-tiny': r64['weight_dtypes'], 'smolvlm-tiny-tied': t64['weight_dtypes'],
                          **{n: g.pop('weight_dtypes') for n, g in variant_greedy.items()}},
        'files': manifest_files,
        'selfchecks': checks,
        'environment': {'python': platform.python_version(), 'torch': torch.__version__, 'numpy': np.__version__,
                        'pillow': Image.__version__},
    }
    with open(os.path.join(OUT, 'manifest.json'), 'w') as f:
        json.dump(manifest, f, indent=2)
        f.write('\n')
    total = sum(e['bytes'] for e in manifest_files.values())
    print(f'wrote {len(manifest_files)} goldens ({total / 1e6:.2f} MB) + manifest.json to {rel(OUT)} '
          f'in {time.time() - t0:.1f} s')
    for name, g in manifest['greedy'].items():
        print(f"{name}: tokens {g['tokens']} ({g['stop_reason']}); min top1-top2 gap {g['min_top1_top2_gap']:.4f} "
              f"at step {g['min_top1_top2_gap_step']}")


if __name__ == '__main__':
    main()
