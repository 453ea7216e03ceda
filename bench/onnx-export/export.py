"""Exports a SmolVLM (Idefics3) checkpoint to the ONNX layout transformers.js loads, after checking the export
modules against the project's independent PyTorch reference (test/reference/). See README.md.

Run from the repository root with Debian's Python (torch 1.13, numpy, onnx 1.12):
    /usr/bin/python3 bench/onnx-export/export.py [--model DIR] [--max-new 32]
`npm run bench:model` runs it when <model>/onnx/manifest.json is missing or stale. Needs
<model>/bench-input/ (written by bench/model/model-inputs.ts): the prompt ids and pixel values of the bench request.

Writes <model>/onnx/:
    vision_encoder.onnx, embed_tokens.onnx, decoder_model_merged.onnx   (f32, opset 17, weights inline)
    verify/image_features.f32, verify/logits0.f32, verify/reference.json (reference outputs, for the ORT check)
    manifest.json                                                       (sizes, sha256, check figures, recipe)
"""

import argparse
import hashlib
import json
import os
import sys
import time

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, '..', '..'))
sys.path.insert(0, os.path.join(ROOT, 'test', 'reference'))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True

import connector  # noqa: E402  (test/reference)
import decoder  # noqa: E402
import safetensors_io  # noqa: E402
import vision  # noqa: E402
from modules import Decoder, EmbedTokens, VisionEncoder, fan_in_check, kv_shape  # noqa: E402

OPSET = 17
STOP_IDS = (49279, 2)  # <end_of_utterance>, </s>
F32, F64 = torch.float32, torch.float64


def log(msg):
    print(f'[onnx-export] {msg}', flush=True)


def recipe_hash():
    """sha256 over this folder's Python sources: a changed exporter makes old exports stale."""
    h = hashlib.sha256()
    for name in sorted(os.listdir(HERE)):
        if name.endswith('.py'):
            with open(os.path.join(HERE, name), 'rb') as f:
                h.update(name.encode() + b'\0' + f.read())
    return h.hexdigest()


def sha256_file(path):
    return safetensors_io.sha256_file(path)


def max_abs(a, b):
    return float((a.to(F64) - b.to(F64)).abs().max())


def top2_gap(logits):
    v = torch.topk(logits.to(F64), 2).values
    return float(v[0] - v[1])


def load_input(model_dir):
    d = os.path.join(model_dir, 'bench-input')
    with open(os.path.join(d, 'input.json')) as f:
        meta = json.load(f)
    px = np.fromfile(os.path.join(d, 'pixel_values.f32'), dtype='<f4').reshape(meta['pixelShape'])
    return meta, torch.from_numpy(px.copy())


def reference_run(W, config, ids, pixels, dtype, max_new):
    """The project's reference (test/reference): vision tower -> connector -> splice -> greedy with KV cache."""
    mask = torch.ones((pixels.shape[0], pixels.shape[2], pixels.shape[3]), dtype=torch.long)
    vis, _ = vision.vision_tower(pixels, mask, W, config['vision_config'], dtype)
    img = connector.connector(vis, W, config['scale_factor'], dtype).reshape(-1, config['text_config']['hidden_size'])
    c = decoder.TextConfig(config)
    x = decoder.splice_images(decoder.embed(ids, W, dtype), ids, img, c.image_token_id)
    tokens, step_logits, _ = decoder.greedy(x, W, c, dtype, max_new, STOP_IDS)
    return img, tokens, step_logits


def module_run(vis_m, emb_m, dec_m, config, ids, pixels, max_new):
    """The export modules, driven the way transformers.js drives the ONNX sessions."""
    n_layers, n_kv, hd = kv_shape(config)
    with torch.no_grad():
        img = vis_m(pixels[None], torch.ones((1, pixels.shape[0], pixels.shape[2], pixels.shape[3]), dtype=torch.bool))
        img = img.reshape(-1, img.shape[-1])
        ids_t = torch.tensor([ids], dtype=torch.int64)
        x = emb_m(ids_t)
        pos = (ids_t[0] == config['image_token_id']).nonzero().reshape(-1)
        x[0, pos] = img
        past = [torch.zeros((1, n_kv, 0, hd)) for _ in range(2 * n_layers)]
        keep = torch.tensor(1, dtype=torch.int64)
        total = len(ids)
        tokens, step_logits = [], []
        for step in range(max_new):
            attn = torch.ones((1, total), dtype=torch.int64)
            position_ids = torch.arange(total - x.shape[1], total, dtype=torch.int64)[None]
            logits, past = dec_m(x, attn, position_ids, past, keep)
            step_logits.append(logits[0, -1])
            tok = int(torch.argmax(logits[0, -1]))
            tokens.append(tok)
            if tok in STOP_IDS:
                break
            x = emb_m(torch.tensor([[tok]], dtype=torch.int64))
            total += 1
    return img, tokens, step_logits


class DecoderForExport(torch.nn.Module):
    """Flat positional signature for torch.onnx.export: (embeds, mask, position_ids, *past, keep)."""

    def __init__(self, dec):
        super().__init__()
        self.dec = dec

    def forward(self, inputs_embeds, attention_mask, position_ids, *rest):
        logits, present = self.dec(inputs_embeds, attention_mask, position_ids, list(rest[:-1]), rest[-1])
        return (logits, *present)


def export_all(vis_m, emb_m, dec_m, config, out_dir):
    n_layers, n_kv, hd = kv_shape(config)
    t = config['text_config']
    v = config['vision_config']
    files = {}

    def done(name, t0):
        path = os.path.join(out_dir, name)
        files[name] = {'bytes': os.path.getsize(path), 'sha256': sha256_file(path)}
        log(f'{name}: {files[name]["bytes"] / 2**20:.1f} MiB in {time.time() - t0:.1f} s')

    t0 = time.time()
    size = v['image_size']
    torch.onnx.export(
        vis_m,
        (torch.zeros((1, 1, 3, size, size)), torch.ones((1, 1, size, size), dtype=torch.bool)),
        os.path.join(out_dir, 'vision_encoder.onnx'),
        input_names=['pixel_values', 'pixel_attention_mask'],
        output_names=['image_features'],
        dynamic_axes={'pixel_values': {0: 'batch_size', 1: 'num_images'},
                      'pixel_attention_mask': {0: 'batch_size', 1: 'num_images'},
                      'image_features': {0: 'batch_size_x_num_images'}},
        opset_version=OPSET, do_constant_folding=True)
    done('vision_encoder.onnx', t0)

    t0 = time.time()
    torch.onnx.export(
        emb_m, (torch.tensor([[1, 2, 3]], dtype=torch.int64),), os.path.join(out_dir, 'embed_tokens.onnx'),
        input_names=['input_ids'], output_names=['inputs_embeds'],
        dynamic_axes={'input_ids': {0: 'batch_size', 1: 'sequence_length'},
                      'inputs_embeds': {0: 'batch_size', 1: 'sequence_length'}},
        opset_version=OPSET, do_constant_folding=True)
    done('embed_tokens.onnx', t0)

    t0 = time.time()
    past_len, seq = 2, 3  # neither 0 nor 1, so the tracer cannot specialise on them
    past_names, present_names, past = [], [], []
    for i in range(n_layers):
        for kind in ('key', 'value'):
            past_names.append(f'past_key_values.{i}.{kind}')
            present_names.append(f'present.{i}.{kind}')
            past.append(torch.randn((1, n_kv, past_len, hd)))
    dyn = {'inputs_embeds': {0: 'batch_size', 1: 'sequence_length'},
           'attention_mask': {0: 'batch_size', 1: 'total_sequence_length'},
           'position_ids': {0: 'batch_size', 1: 'sequence_length'},
           'logits': {0: 'batch_size', 1: 'num_logits'}}
    for n in past_names:
        dyn[n] = {0: 'batch_size', 2: 'past_sequence_length'}
    for n in present_names:
        dyn[n] = {0: 'batch_size', 2: 'total_sequence_length'}
    args = (torch.randn((1, seq, t['hidden_size'])), torch.ones((1, past_len + seq), dtype=torch.int64),
            torch.arange(past_len, past_len + seq, dtype=torch.int64)[None], *past, torch.tensor(1, dtype=torch.int64))
    torch.onnx.export(
        DecoderForExport(dec_m), args, os.path.join(out_dir, 'decoder_model_merged.onnx'),
        input_names=['inputs_embeds', 'attention_mask', 'position_ids', *past_names, 'num_logits_to_keep'],
        output_names=['logits', *present_names], dynamic_axes=dyn, opset_version=OPSET, do_constant_folding=True)
    done('decoder_model_merged.onnx', t0)
    return files


def check_graphs(out_dir):
    """onnx.checker on each file, and the graph inputs/outputs transformers.js will see."""
    import onnx
    io = {}
    for name in ('vision_encoder.onnx', 'embed_tokens.onnx', 'decoder_model_merged.onnx'):
        path = os.path.join(out_dir, name)
        onnx.checker.check_model(path)
        m = onnx.load(path, load_external_data=False)
        dims = lambda vi: [d.dim_param or d.dim_value for d in vi.type.tensor_type.shape.dim]  # noqa: E731
        ops = sorted({n.op_type for n in m.graph.node})
        io[name] = {'inputs': {i.name: dims(i) for i in m.graph.input[:4]}, 'numInputs': len(m.graph.input),
                    'outputs': {o.name: dims(o) for o in m.graph.output[:3]}, 'numOutputs': len(m.graph.output),
                    'ops': ops}
        log(f'{name}: {len(m.graph.input)} inputs, {len(m.graph.output)} outputs, ops {", ".join(ops)}')
    return io


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--model', default=os.path.join(ROOT, '.cache', 'bench-models', 'smolvlm-256m-random'))
    ap.add_argument('--max-new', type=int, default=32)
    args = ap.parse_args()
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    started = time.time()
    model_dir = args.model
    out_dir = os.path.join(model_dir, 'onnx')
    os.makedirs(os.path.join(out_dir, 'verify'), exist_ok=True)
    manifest_path = os.path.join(out_dir, 'manifest.json')
    for stale in (manifest_path, os.path.join(out_dir, 'ort-check.json')):
        if os.path.exists(stale):
            os.remove(stale)  # a half-written export is never "current"

    with open(os.path.join(model_dir, 'config.json')) as f:
        config = json.load(f)
    fan_in_check(config)
    meta, pixels = load_input(model_dir)
    ids = meta['inputIds']
    log(f'checkpoint {model_dir}; request: {len(ids)} prompt tokens, pixel_values {list(pixels.shape)}')
    W, files, _ = safetensors_io.load_checkpoint(model_dir)

    vis_m, emb_m, dec_m = VisionEncoder(config), EmbedTokens(config), Decoder(config)
    vis_m.load(W)
    emb_m.load(W)
    dec_m.load(W)
    for m in (vis_m, emb_m, dec_m):
        m.eval()

    # 1. Export modules vs the project's reference, on the bench request.
    t0 = time.time()
    ref64_img, ref64_tokens, ref64_logits = reference_run(W, config, ids, pixels, F64, args.max_new)
    log(f'reference float64: tokens {ref64_tokens} ({time.time() - t0:.0f} s)')
    t0 = time.time()
    ref_img, ref_tokens, ref_logits = reference_run(W, config, ids, pixels, F32, args.max_new)
    log(f'reference float32: tokens {ref_tokens} ({time.time() - t0:.0f} s)')
    t0 = time.time()
    mod_img, mod_tokens, mod_logits = module_run(vis_m, emb_m, dec_m, config, ids, pixels, args.max_new)
    log(f'export modules (float32): tokens {mod_tokens} ({time.time() - t0:.0f} s)')
    steps = min(len(ref_logits), len(mod_logits))
    check = {
        'referenceTokensF64': ref64_tokens,
        'referenceTokensF32': ref_tokens,
        'moduleTokens': mod_tokens,
        'tokensEqual': ref64_tokens == ref_tokens == mod_tokens,
        'imageFeaturesMaxAbsDiffModuleVsRef32': max_abs(mod_img, ref_img),
        'imageFeaturesMaxAbsDiffRef32VsRef64': max_abs(ref_img, ref64_img),
        'imageFeaturesMaxAbs': float(ref64_img.abs().max()),
        'logits0MaxAbsDiffModuleVsRef32': max_abs(mod_logits[0], ref_logits[0]),
        'logits0MaxAbsDiffRef32VsRef64': max_abs(ref_logits[0], ref64_logits[0]),
        'logitsMaxAbsDiffModuleVsRef32AllSteps': max(max_abs(mod_logits[i], ref_logits[i]) for i in range(steps)),
        'logits0Std': float(ref64_logits[0].std()),
        'minTop2GapF64': min(top2_gap(l) for l in ref64_logits),
    }
    log('check: ' + json.dumps({k: v for k, v in check.items() if not k.endswith('F32') and k != 'moduleTokens'}))
    if not check['tokensEqual']:
        raise SystemExit(f'export modules disagree with the reference: {mod_tokens} vs {ref_tokens} (f64 {ref64_tokens})')

    ref64_img.to(F32).numpy().astype('<f4').tofile(os.path.join(out_dir, 'verify', 'image_features.f32'))
    ref64_logits[0].to(F32).numpy().astype('<f4').tofile(os.path.join(out_dir, 'verify', 'logits0.f32'))
    with open(os.path.join(out_dir, 'verify', 'reference.json'), 'w') as f:
        json.dump({'description': 'test/reference float64 outputs on bench-input/: image_features [numImageTokens, '
                                  'text_hidden] and step-0 logits [vocab] as f32; greedy tokens',
                   'imageFeaturesShape': list(ref64_img.shape), 'tokens': ref64_tokens,
                   'minTop2GapF64': check['minTop2GapF64']}, f)
        f.write('\n')

    # 2. Export.
    out_files = export_all(vis_m, emb_m, dec_m, config, out_dir)
    io = check_graphs(out_dir)
    with open(os.path.join(model_dir, 'manifest.json')) as f:
        source = json.load(f)['files']['model.safetensors']
    manifest = {
        'recipe': recipe_hash(),
        'source': {'model.safetensors': source,
                   'bench-input/input.json': sha256_file(os.path.join(model_dir, 'bench-input', 'input.json')),
                   'bench-input/pixel_values.f32': sha256_file(os.path.join(model_dir, 'bench-input', 'pixel_values.f32'))},
        'torch': torch.__version__,
        'opset': OPSET,
        'dtype': 'fp32',
        'files': out_files,
        'io': io,
        'check': check,
        'seconds': round(time.time() - started, 1),
    }
    with open(manifest_path, 'w') as f:
        json.dump(manifest, f, indent=2)
        f.write('\n')
    log(f'done in {manifest["seconds"]} s -> {out_dir}')


if __name__ == '__main__':
    main()
