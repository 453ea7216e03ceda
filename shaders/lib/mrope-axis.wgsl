// lib/mrope-axis.wgsl: which of a token's three M-RoPE positions (t, h, w: rows 0, 1, 2) turns rotary
// frequency i (rope.wgsl, decode-qkv.wgsl):
//   mode 1 (contiguous sections, Qwen2.5-VL): t below a, h below b, w after
//   mode 2 (interleaved, Qwen3-VL): h where i % 3 == 1 and i < a, w where i % 3 == 2 and i < b, t elsewhere
//   mode 0 (plain RoPE): always t, the one row
fn mrope_axis(i: u32, mode: u32, a: u32, b: u32) -> u32 {
  if (mode == 1u) { return select(select(2u, 1u, i < b), 0u, i < a); }
  if (mode == 2u) {
    if (i % 3u == 1u && i < a) { return 1u; }
    if (i % 3u == 2u && i < b) { return 2u; }
  }
  return 0u;
}
