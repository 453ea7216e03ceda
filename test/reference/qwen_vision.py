"""Float64 PyTorch reference of the Qwen-VL vision towers -> test/fixtures/goldens/qwen-vision.json
(and the seeded patch rows, float32, in qwen-vision-patches.f32.bin beside it).

Written from the math of transformers' models/qwen2_5_vl/modeling_qwen2_5_vl.py (not copied):
- patch embedding: a Conv3d of kernel = stride = (temporal_patch, patch, patch) without bias over rows of
  C * T * P * P values (the processor's patch rows): a product with the weight read as [D, C*T*P*P];
- 2-D rotary: a table of head_dim / 4 frequencies (theta 10000 over head_dim / 2); each patch's angles are
  those of its row h, then those of its column w, repeated on both halves of the head (rotate-half);
  angles in float32, as HF forms them;
- windows: the merge units (spatial_merge x spatial_merge patches, consecutive rows) regrouped window by
  window (window_size / merge / patch units a side, windows cut from the top left, the last ones partial);
  attention runs within a window, except in the fullatt_block_indexes layers, where it runs over each frame
  (one temporal patch step: grid h * w patches);
- blocks: RMSNorm (eps 1e-6) -> fused qkv with bias -> rotary on q, k -> softmax(q k^T / sqrt(hd)) v ->
  proj with bias -> residual; RMSNorm -> SiLU(gate) * up -> down (all with biases) -> residual;
- merger: RMSNorm of each patch, 4 consecutive rows (one merge unit) as one row, Linear + exact GELU +
  Linear (with biases); rows back in the original merge-unit order.

and from models/qwen3_vl/modeling_qwen3_vl.py (`Qwen3VLVisionModel`):
- patch embedding with a bias; the learned position grid (G x G, G = sqrt(num_position_embeddings))
  resampled to the patch grid bilinearly (`fast_pos_embed_interpolate`: rows at torch.linspace(0, G - 1, h),
  columns likewise, the four corners' weights in float32, corners added in order), in the processor's
  patch order and repeated per frame;
- the same 2-D rotary; blocks of LayerNorm (eps 1e-6) -> attention over each frame -> LayerNorm -> fc1 +
  tanh GELU -> fc2;
- after each DeepStack tap (deepstack_visual_indexes[k]), merger k: fold 4 rows into one, LayerNorm over
  the folded row, fc1 + exact GELU, fc2; the final merger norms each patch first (LayerNorm), then folds.

The patch rows are seeded noise; the features are float64, stored rounded to float32.

    /usr/bin/python3 test/reference/qwen_vision.py      (after `npx tsx scripts/make-tiny.ts`)
"""
import json
import math
import os

import torch

import safetensors_io
from decoder import rms_norm, silu
from vision import gelu_tanh, layer_norm as _layer_norm
from voxtral import gelu

EPS = 1e-6  # every norm of both towers (HF builds them with eps 1e-6)


def rms(x, w):
    return rms_norm(x, w, EPS)


def layer_norm(x, w, b):
    return _layer_norm(x, w, b, EPS)

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))
MODELS = os.path.join(ROOT, 'public', 'models')
OUT = os.path.join(ROOT, 'test', 'fixtures', 'goldens', 'qwen-vision.json')
PATCHES_OUT = os.path.join(ROOT, 'test', 'fixtures', 'goldens', 'qwen-vision-patches.f32.bin')
F64, F32 = torch.float64, torch.float32


def patch_positions(t, h, w, m):
    """(row, column) of each patch in the processor's order: merge block by merge block, t repeating."""
    rows = torch.arange(h)[:, None].expand(h, w).reshape(h // m, m, w // m, m).permute(0, 2, 1, 3).flatten()
    cols = torch.arange(w)[None, :].expand(h, w).reshape(h // m, m, w // m, m).permute(0, 2, 1, 3).flatten()
    return rows.repeat(t), cols.repeat(t)


def rotary(rows, cols, head_dim):
    """cos, sin [N, head_dim] float32 of the 2-D rotary (row frequencies, then column ones, twice)."""
    dim = head_dim // 2
    inv_freq = 1.0 / (10000.0 ** (torch.arange(0, dim, 2, dtype=F32) / dim))
    fr = rows.to(F32)[:, None] * inv_freq[None, :]
    fc = cols.to(F32)[:, None] * inv_freq[None, :]
    emb = torch.cat([fr, fc, fr, fc], dim=-1)
    return emb.cos(), emb.sin()


def windows(t, h, w, m, window_units):
    """Merge-unit order window by window, and each window's merge-unit count (frames one after another)."""
    lh, lw = h // m, w // m
    order, sizes = [], []
    for f in range(t):
        for wr in range(0, lh, window_units):
            for wc in range(0, lw, window_units):
                units = [f * lh * lw + r * lw + c for r in range(wr, min(wr + window_units, lh))
                         for c in range(wc, min(wc + window_units, lw))]
                order += units
                sizes.append(len(units))
    return torch.tensor(order), sizes


def windows_padded(t, h, w, m, window_units):
    """The same order by the padding formulation (pad each frame's unit grid to whole windows with -1,
    read window by window, drop the padding): a self-check of windows()."""
    lh, lw = h // m, w // m
    index = torch.arange(t * lh * lw).reshape(t, lh, lw)
    ph, pw = (-lh) % window_units, (-lw) % window_units
    padded = torch.nn.functional.pad(index, (0, pw, 0, ph), 'constant', -1)
    nh, nw = (lh + ph) // window_units, (lw + pw) // window_units
    padded = padded.reshape(t, nh, window_units, nw, window_units).permute(0, 1, 3, 2, 4).reshape(t, nh * nw, -1)
    sizes = (padded >= 0).sum(-1).reshape(-1).tolist()
    flat = padded.reshape(-1)
    return flat[flat >= 0], sizes


def attention(qkv, heads, segments):
    """Bidirectional attention within each segment of rows. qkv [N, 3 * D] -> [N, D]."""
    N = qkv.shape[0]
    D = qkv.shape[1] // 3
    hd = D // heads
    q, k, v = (qkv[:, i * D:(i + 1) * D].reshape(N, heads, hd).transpose(0, 1) for i in range(3))
    out = torch.empty(heads, N, hd, dtype=qkv.dtype)
    start = 0
    for n in segments:
        s = slice(start, start + n)
        sc = (q[:, s] @ k[:, s].transpose(-1, -2)) / math.sqrt(hd)
        sc = sc - sc.amax(-1, keepdim=True)
        p = torch.exp(sc)
        out[:, s] = (p / p.sum(-1, keepdim=True)) @ v[:, s]
        start += n
    return out.transpose(0, 1).reshape(N, D)


def rotate(x, cos, sin):
    """x [N, heads, hd]; rotate-half with cos/sin [N, hd]."""
    half = x.shape[-1] // 2
    return x * cos[:, None] + torch.cat([-x[..., half:], x[..., :half]], dim=-1) * sin[:, None]


def rotary_attention(y, g, p, heads, cos, sin, segments):
    """Both towers' attention on normed rows y [N, D]: fused qkv with bias, the 2-D rotary on q and k,
    attention within each segment, then proj with bias."""
    N, D = y.shape
    hd = D // heads
    qkv = y @ g(p + 'qkv.weight').t() + g(p + 'qkv.bias')
    q = rotate(qkv[:, :D].reshape(N, heads, hd), cos, sin).reshape(N, D)
    k = rotate(qkv[:, D:2 * D].reshape(N, heads, hd), cos, sin).reshape(N, D)
    a = attention(torch.cat([q, k, qkv[:, 2 * D:]], dim=-1), heads, segments)
    return a @ g(p + 'proj.weight').t() + g(p + 'proj.bias')


def tower(W, vc, patches, grid, dtype):
    t, h, w = grid
    m = vc['spatial_merge_size']
    unit = m * m
    D = vc['hidden_size']
    heads = vc['num_heads']
    hd = D // heads
    g = lambda n: W['visual.' + n].to(dtype)  # noqa: E731
    x = patches.to(dtype) @ g('patch_embed.proj.weight').reshape(D, -1).t()
    rows, cols = patch_positions(t, h, w, m)
    cos, sin = rotary(rows, cols, hd)
    order, sizes = windows(t, h, w, m, vc['window_size'] // m // vc['patch_size'])
    patch_order = (order[:, None] * unit + torch.arange(unit)[None, :]).flatten()
    x, cos, sin = x[patch_order], cos[patch_order].to(dtype), sin[patch_order].to(dtype)
    window_segments = [n * unit for n in sizes]
    frame_segments = [h * w] * t
    for i in range(vc['depth']):
        b = f'blocks.{i}.'
        y = rms(x, g(b + 'norm1.weight'))
        segments = frame_segments if i in vc['fullatt_block_indexes'] else window_segments
        x = x + rotary_attention(y, g, b + 'attn.', heads, cos, sin, segments)
        y = rms(x, g(b + 'norm2.weight'))
        gate = y @ g(b + 'mlp.gate_proj.weight').t() + g(b + 'mlp.gate_proj.bias')
        up = y @ g(b + 'mlp.up_proj.weight').t() + g(b + 'mlp.up_proj.bias')
        x = x + (silu(gate) * up) @ g(b + 'mlp.down_proj.weight').t() + g(b + 'mlp.down_proj.bias')
    y = rms(x, g('merger.ln_q.weight')).reshape(-1, unit * D)
    y = gelu(y @ g('merger.mlp.0.weight').t() + g('merger.mlp.0.bias'))
    y = y @ g('merger.mlp.2.weight').t() + g('merger.mlp.2.bias')
    return y[torch.argsort(order)]


def interpolated_positions(table, G, t, h, w, m):
    """The learned positions at an h x w patch grid, processor order, frames repeating: [t*h*w, D]."""
    hs, ws = torch.linspace(0, G - 1, h), torch.linspace(0, G - 1, w)  # float32
    hf, wf = hs.int(), ws.int()
    hc, wc = (hf + 1).clamp(max=G - 1), (wf + 1).clamp(max=G - 1)
    dh, dw = hs - hf, ws - wf
    corners = [(hf[:, None] * G + wf[None, :], (1 - dh)[:, None] * (1 - dw)[None, :]),
               (hf[:, None] * G + wc[None, :], (1 - dh)[:, None] * dw[None, :]),
               (hc[:, None] * G + wf[None, :], dh[:, None] * (1 - dw)[None, :]),
               (hc[:, None] * G + wc[None, :], dh[:, None] * dw[None, :])]
    pos = None
    for idx, weight in corners:
        term = table[idx.flatten().long()] * weight.flatten()[:, None].to(table.dtype)
        pos = term if pos is None else pos + term
    D = table.shape[1]
    pos = pos.reshape(h // m, m, w // m, m, D).permute(0, 2, 1, 3, 4).reshape(h * w, D)
    return pos.repeat(t, 1)


def tower3(W, vc, patches, grid, dtype):
    t, h, w = grid
    m = vc['spatial_merge_size']
    unit = m * m
    D = vc['hidden_size']
    heads = vc['num_heads']
    hd = D // heads
    G = int(round(math.sqrt(vc['num_position_embeddings'])))
    g = lambda n: W['model.visual.' + n].to(dtype)  # noqa: E731
    x = patches.to(dtype) @ g('patch_embed.proj.weight').reshape(D, -1).t() + g('patch_embed.proj.bias')
    x = x + interpolated_positions(g('pos_embed.weight'), G, t, h, w, m)
    rows, cols = patch_positions(t, h, w, m)
    cos, sin = rotary(rows, cols, hd)
    cos, sin = cos.to(dtype), sin.to(dtype)
    frames = [h * w] * t
    levels = []
    taps = vc['deepstack_visual_indexes']
    for i in range(vc['depth']):
        b = f'blocks.{i}.'
        y = layer_norm(x, g(b + 'norm1.weight'), g(b + 'norm1.bias'))
        x = x + rotary_attention(y, g, b + 'attn.', heads, cos, sin, frames)
        y = layer_norm(x, g(b + 'norm2.weight'), g(b + 'norm2.bias'))
        y = gelu_tanh(y @ g(b + 'mlp.linear_fc1.weight').t() + g(b + 'mlp.linear_fc1.bias'))
        x = x + y @ g(b + 'mlp.linear_fc2.weight').t() + g(b + 'mlp.linear_fc2.bias')
        if i in taps:
            d = f'deepstack_merger_list.{taps.index(i)}.'
            y = layer_norm(x.reshape(-1, unit * D), g(d + 'norm.weight'), g(d + 'norm.bias'))
            y = gelu(y @ g(d + 'linear_fc1.weight').t() + g(d + 'linear_fc1.bias'))
            levels.append(y @ g(d + 'linear_fc2.weight').t() + g(d + 'linear_fc2.bias'))
    y = layer_norm(x, g('merger.norm.weight'), g('merger.norm.bias')).reshape(-1, unit * D)
    y = gelu(y @ g('merger.linear_fc1.weight').t() + g('merger.linear_fc1.bias'))
    return y @ g('merger.linear_fc2.weight').t() + g('merger.linear_fc2.bias'), levels


CASES = {
    # checkpoint: [(name, grid (t, h, w) in patches)]
    'qwen2_5_vl-tiny': [
        ('image: whole windows (8 x 12 patches)', (1, 8, 12)),
        ('image: partial windows at the right and bottom (6 x 10 patches)', (1, 6, 10)),
        ('video: two frame groups (2 x 4 x 8), full attention per frame', (2, 4, 8)),
    ],
    # The tiny grid of learned positions is 8 x 8: grids smaller, larger and equal to it resample it.
    'qwen3_vl-tiny': [
        ('image: 6 x 10 patches (positions resampled across)', (1, 6, 10)),
        ('image: 12 x 4 patches (positions stretched down, squeezed across)', (1, 12, 4)),
        ('image: 8 x 8 patches (the grid itself)', (1, 8, 8)),
        ('video: two frame groups (2 x 4 x 6)', (2, 4, 6)),
    ],
}


def run_model(name, patch_rows):
    """The golden cases of one checkpoint; their patch rows are appended to patch_rows (float32, in order)."""
    d = os.path.join(MODELS, name)
    with open(os.path.join(d, 'config.json')) as f:
        vc = json.load(f)['vision_config']
    W, _, _ = safetensors_io.load_checkpoint(d)
    qwen3 = 'deepstack_visual_indexes' in vc
    row = (vc.get('in_channels') or vc.get('in_chans') or 3) * vc['temporal_patch_size'] * vc['patch_size'] ** 2
    m = vc['spatial_merge_size']
    out = []
    for k, (case, grid) in enumerate(CASES[name]):
        n = grid[0] * grid[1] * grid[2]
        gen = torch.Generator().manual_seed(3000 + k)
        patches = (torch.rand(n, row, generator=gen, dtype=F64) * 4 - 2).to(F32).to(F64)
        if qwen3:
            f64, l64 = tower3(W, vc, patches, grid, F64)
            f32, l32 = tower3(W, vc, patches, grid, F32)
            entry = {}
        else:
            f64, l64 = tower(W, vc, patches, grid, F64), []
            f32, l32 = tower(W, vc, patches, grid, F32), []
            order, sizes = windows(*grid, m, vc['window_size'] // m // vc['patch_size'])
            entry = {'windowIndex': order.tolist(), 'windowUnits': sizes}
        diff = max(float((a.to(F64) - b).abs().max()) for a, b in zip([f32, *l32], [f64, *l64]))
        flat = patches.to(F32).flatten()
        out.append({'name': case, 'grid': {'t': grid[0], 'h': grid[1], 'w': grid[2]}, **entry,
                    'patches': {'offset': sum(x.numel() for x in patch_rows), 'length': flat.numel()},
                    'features': f64.to(F32).flatten().tolist(),
                    'deepstack': [x.to(F32).flatten().tolist() for x in l64],
                    'featureRows': f64.shape[0], 'f32VsF64MaxAbsDiff': diff,
                    'maxAbs': max(float(x.abs().max()) for x in [f64, *l64])})
        print(f'{name} / {case}: {n} patches -> {f64.shape[0]} x {f64.shape[1]} features (+{len(l64)} DeepStack levels), '
              f'max |x| {out[-1]["maxAbs"]:.3g}, f32 vs f64 {diff:.2e}')
        patch_rows.append(flat)
    return {'checkpoint': name, 'sha256': safetensors_io.sha256_file(os.path.join(d, 'model.safetensors')), 'cases': out}


def main():
    for grid in [(1, 8, 12), (1, 6, 10), (2, 4, 8), (1, 14, 6), (3, 2, 2)]:
        a, b = windows(*grid, 2, 2), windows_padded(*grid, 2, 2)
        if not torch.equal(a[0], b[0]) or a[1] != b[1]:
            raise ValueError(f'window orders differ for grid {grid}')
    patch_rows = []
    models = [run_model(n, patch_rows) for n in CASES]
    # The patch rows (most of the data) as float32 bytes beside the JSON; each case names its slice in floats.
    torch.cat(patch_rows).numpy().astype('<f4').tofile(PATCHES_OUT)
    with open(OUT, 'w') as f:
        json.dump({'about': 'test/reference/qwen_vision.py', 'models': models}, f)
        f.write('\n')
    print(f'-> {os.path.relpath(OUT, ROOT)}, {os.path.relpath(PATCHES_OUT, ROOT)}')


if __name__ == '__main__':
    main()
