"""Exports the Voxtral-layout bench checkpoint (`npm run bench:audio`) to the ONNX layout transformers.js's
VoxtralForConditionalGeneration loads, after checking the export modules against the project's float64
reference (test/reference/voxtral.py). See ../README.md, section "Voxtral".

Run from the repository root with Debian's Python (torch 1.13, numpy, onnx 1.12):
    /usr/bin/python3 bench/onnx-export/voxtral/voxtral_export.py [--model DIR] [--max-new 20]
`npm run bench:audio` runs it when <model>/onnx/manifest.json is missing or stale (bench/audio/audio-export.ts).

Lives in a subfolder so that adding it does not change ../export.py's recipe hash (the SmolVLM export stays
current); its own recipe covers ../*.py and this folder's *.py.

Writes <model>/onnx/:
    audio_encoder.onnx, embed_tokens.onnx, decoder_model_merged.onnx   (f32, opset 17, weights inline)
    verify/audio_values.f32 (one chunk's log-mel), verify/audio_features.f32, verify/logits0.f32,
    verify/reference.json                                             (reference outputs, for the ORT check)
    manifest.json                                                     (sizes, sha256, check figures, recipe)
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
PARENT = os.path.dirname(HERE)
ROOT = os.path.abspath(os.path.join(PARENT, '..', '..'))
sys.path.insert(0, os.path.join(ROOT, 'test', 'reference'))
sys.path.insert(0, PARENT)
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True

import decoder  # noqa: E402  (test/reference)
import log_mel  # noqa: E402
import safetensors_io  # noqa: E402
import voxtral  # noqa: E402
from export import OPSET, DecoderForExport, max_abs, sha256_file, top2_gap  # noqa: E402  (../export.py)
from modules import Decoder, EmbedTokens, kv_shape  # noqa: E402  (../modules.py)
from voxtral_modules import AudioEncoder, fan_in_check, text_weights  # noqa: E402

STOP_IDS = (2,)  # </s>
F32, F64 = torch.float32, torch.float64
FILES = ('audio_encoder.onnx', 'embed_tokens.onnx', 'decoder_model_merged.onnx')


def log(msg):
    print(f'[onnx-export] {msg}', flush=True)


def recipe_hash():
    """sha256 over ../*.py then voxtral/*.py (sorted, name NUL content); bench/audio/audio-export.ts repeats it."""
    h = hashlib.sha256()
    for folder, prefix in ((PARENT, ''), (HERE, 'voxtral/')):
        for name in sorted(os.listdir(folder)):
            if name.endswith('.py'):
                with open(os.path.join(folder, name), 'rb') as f:
                    h.update((prefix + name).encode() + b'\0' + f.read())
    return h.hexdigest()


def check_prompt(model_dir, num_audio):
    """The reference's transcription prompt: <s> [INST] [BEGIN_AUDIO] [AUDIO]*n [/INST] lang:en [TRANSCRIBE]."""
    lang = voxtral.vocab_ids(model_dir, 'lang', ':', 'en')
    return ([voxtral.BOS, voxtral.INST, voxtral.BEGIN_AUDIO] + [voxtral.AUDIO] * num_audio + [voxtral.END_INST] + lang
            + [voxtral.TRANSCRIBE])


def reference_run(W, TW, config, model_dir, feats, dtype, max_new):
    a = config['audio_config']
    tower = voxtral.encoder(torch.from_numpy(feats), W, a, dtype)
    embeds = voxtral.projector(tower, W, a, dtype)
    ids = check_prompt(model_dir, embeds.shape[0])
    c = decoder.TextConfig({**config, 'image_token_id': config['audio_token_id']})
    x = decoder.splice_images(decoder.embed(ids, TW, dtype), ids, embeds, voxtral.AUDIO)
    tokens, step_logits, _ = decoder.greedy(x, TW, c, dtype, max_new, STOP_IDS)
    return ids, embeds, tokens, step_logits


def module_run(enc_m, emb_m, dec_m, config, ids, feats, max_new):
    """The export modules, driven the way transformers.js drives the ONNX sessions."""
    n_layers, n_kv, hd = kv_shape(config)
    with torch.no_grad():
        feat = enc_m(torch.from_numpy(feats).float()[None])
        ids_t = torch.tensor([ids], dtype=torch.int64)
        x = emb_m(ids_t)
        pos = (ids_t[0] == config['audio_token_id']).nonzero().reshape(-1)
        x[0, pos] = feat
        past = [torch.zeros((1, n_kv, 0, hd)) for _ in range(2 * n_layers)]
        keep = torch.tensor(1, dtype=torch.int64)
        total = len(ids)
        tokens, step_logits = [], []
        for _ in range(max_new):
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
    return feat, tokens, step_logits


def export_all(enc_m, emb_m, dec_m, config, out_dir):
    n_layers, n_kv, hd = kv_shape(config)
    t, a = config['text_config'], config['audio_config']
    files = {}

    def done(name, t0):
        path = os.path.join(out_dir, name)
        files[name] = {'bytes': os.path.getsize(path), 'sha256': sha256_file(path)}
        log(f'{name}: {files[name]["bytes"] / 2**20:.1f} MiB in {time.time() - t0:.1f} s')

    t0 = time.time()
    frames = 2 * a['max_source_positions']
    torch.onnx.export(
        enc_m, (torch.randn((2, a['num_mel_bins'], frames)),), os.path.join(out_dir, 'audio_encoder.onnx'),
        input_names=['audio_values'], output_names=['audio_features'],
        dynamic_axes={'audio_values': {0: 'num_chunks'}, 'audio_features': {0: 'num_audio_tokens'}},
        opset_version=OPSET, do_constant_folding=True)
    done('audio_encoder.onnx', t0)

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
    for name in FILES:
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
    ap.add_argument('--model', default=os.path.join(ROOT, '.cache', 'bench-models', 'voxtral-small-random'))
    ap.add_argument('--max-new', type=int, default=20)
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
    a = config['audio_config']
    # One chunk of real features: log_mel.py's 30 s clip (tones, chirp, noise), WhisperFeatureExtractor's recipe.
    feats = log_mel.log_mel(log_mel.clip(30.0, voxtral.SR), a['num_mel_bins']).astype(np.float32)  # [mel, 3000]
    W, _, _ = safetensors_io.load_checkpoint(model_dir)
    TW = text_weights(W)
    log(f'checkpoint {model_dir}; one chunk of features {list(feats.shape)}')

    enc_m = AudioEncoder(config, W['multi_modal_projector.linear_1.weight'].shape,
                         W['multi_modal_projector.linear_2.weight'].shape)
    emb_m, dec_m = EmbedTokens(config), Decoder(config)
    enc_m.load(W)
    emb_m.load(TW)
    dec_m.load(TW)
    for m in (enc_m, emb_m, dec_m):
        m.eval()

    # 1. Export modules vs the project's reference, on one chunk.
    t0 = time.time()
    ids, ref64_feat, ref64_tokens, ref64_logits = reference_run(W, TW, config, model_dir, feats, F64, args.max_new)
    log(f'reference float64: {len(ids)} prompt tokens, tokens {ref64_tokens} ({time.time() - t0:.0f} s)')
    t0 = time.time()
    _, ref_feat, ref_tokens, ref_logits = reference_run(W, TW, config, model_dir, feats, F32, args.max_new)
    log(f'reference float32: tokens {ref_tokens} ({time.time() - t0:.0f} s)')
    t0 = time.time()
    mod_feat, mod_tokens, mod_logits = module_run(enc_m, emb_m, dec_m, config, ids, feats, args.max_new)
    log(f'export modules (float32): tokens {mod_tokens} ({time.time() - t0:.0f} s)')
    steps = min(len(ref_logits), len(mod_logits))
    check = {
        'promptLength': len(ids),
        'referenceTokensF64': ref64_tokens,
        'referenceTokensF32': ref_tokens,
        'moduleTokens': mod_tokens,
        'tokensEqual': ref64_tokens == ref_tokens == mod_tokens,
        'audioFeaturesMaxAbsDiffModuleVsRef32': max_abs(mod_feat, ref_feat),
        'audioFeaturesMaxAbsDiffModuleVsRef64': max_abs(mod_feat, ref64_feat),
        'audioFeaturesMaxAbsDiffRef32VsRef64': max_abs(ref_feat, ref64_feat),
        'audioFeaturesMaxAbs': float(ref64_feat.abs().max()),
        'logits0MaxAbsDiffModuleVsRef32': max_abs(mod_logits[0], ref_logits[0]),
        'logits0MaxAbsDiffModuleVsRef64': max_abs(mod_logits[0], ref64_logits[0]),
        'logits0MaxAbsDiffRef32VsRef64': max_abs(ref_logits[0], ref64_logits[0]),
        'logitsMaxAbsDiffModuleVsRef32AllSteps': max(max_abs(mod_logits[i], ref_logits[i]) for i in range(steps)),
        'logits0Std': float(ref64_logits[0].std()),
        'minTop2GapF64': min(top2_gap(l) for l in ref64_logits),
    }
    log('check: ' + json.dumps({k: v for k, v in check.items() if not k.endswith('F32') and k != 'moduleTokens'}))
    if not check['tokensEqual']:
        raise SystemExit(f'export modules disagree with the reference: {mod_tokens} vs {ref_tokens} (f64 {ref64_tokens})')

    verify = os.path.join(out_dir, 'verify')
    feats.astype('<f4').tofile(os.path.join(verify, 'audio_values.f32'))
    ref64_feat.to(F32).numpy().astype('<f4').tofile(os.path.join(verify, 'audio_features.f32'))
    ref64_logits[0].to(F32).numpy().astype('<f4').tofile(os.path.join(verify, 'logits0.f32'))
    with open(os.path.join(verify, 'reference.json'), 'w') as f:
        json.dump({'description': 'test/reference/voxtral.py float64 outputs on one chunk of log_mel.clip(30 s): '
                                  'audio_values [mel, 3000] (input), audio_features [375, text_hidden] and step-0 '
                                  'logits [vocab] as f32; the prompt ids and greedy tokens',
                   'audioValuesShape': list(feats.shape), 'audioFeaturesShape': list(ref64_feat.shape),
                   'inputIds': ids, 'tokens': ref64_tokens, 'minTop2GapF64': check['minTop2GapF64']}, f)
        f.write('\n')

    # 2. Export.
    out_files = export_all(enc_m, emb_m, dec_m, config, out_dir)
    io = check_graphs(out_dir)
    with open(os.path.join(model_dir, 'manifest.json')) as f:
        source = json.load(f)['files']
    manifest = {
        'recipe': recipe_hash(),
        'source': {'model.safetensors': source['model.safetensors'], 'config.json': source['config.json']},
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
