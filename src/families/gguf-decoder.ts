// The decoder tensors of a llama.cpp model .gguf, as every family's decoder names them in HF
// (`{model}` = the decoder's prefix, `{head}` = the LM head's name without .weight):
//
//   token_embd / output_norm / output   {model}.embed_tokens / {model}.norm / {head} (absent when tied)
//   blk.N.attn_norm / ffn_norm          {model}.layers.N.input_layernorm / post_attention_layernorm
//   blk.N.attn_q / k / v / output       ...self_attn.q_proj / k_proj / v_proj (+ biases) / o_proj
//   blk.N.attn_q_norm / attn_k_norm     ...self_attn.q_norm / k_norm (Qwen3)
//   blk.N.ffn_gate / up / down          ...mlp.gate_proj / up_proj / down_proj
//
// llama.cpp's Llama converter (arch `llama`) reorders q_proj's and k_proj's rows within each head for its
// adjacent-pair RoPE; `heads` (the q and kv head counts) says to undo it. The Qwen architectures keep HF's order.

import type { GgufTensorRef } from '../model/weights/gguf/gguf-plan';

const BLOCK: Record<string, string> = {
  attn_norm: 'input_layernorm',
  ffn_norm: 'post_attention_layernorm',
  attn_q: 'self_attn.q_proj',
  attn_k: 'self_attn.k_proj',
  attn_v: 'self_attn.v_proj',
  attn_output: 'self_attn.o_proj',
  attn_q_norm: 'self_attn.q_norm',
  attn_k_norm: 'self_attn.k_norm',
  ffn_gate: 'mlp.gate_proj',
  ffn_up: 'mlp.up_proj',
  ffn_down: 'mlp.down_proj',
};

/** 'blk.3.attn_q.weight' → ['blk.3.attn_q', 'weight']. */
export function splitSuffix(name: string): [string, string] | undefined {
  const m = /^(.*)\.(weight|bias)$/.exec(name);
  return m ? [m[1], m[2]] : undefined;
}

export function decoderTensor(
  ggufName: string,
  names: { model: string; head: string },
  heads?: { q: number; kv: number },
): GgufTensorRef | undefined {
  const parts = splitSuffix(ggufName);
  if (!parts) return undefined;
  const [base, suffix] = parts;
  const global: Record<string, string> = {
    token_embd: `${names.model}.embed_tokens`,
    output_norm: `${names.model}.norm`,
    output: names.head,
  };
  if (Object.hasOwn(global, base)) return { hfName: `${global[base]}.${suffix}` };
  const m = /^blk\.(\d+)\.(\w+)$/.exec(base);
  if (!m || !Object.hasOwn(BLOCK, m[2])) return undefined;
  const hfName = `${names.model}.layers.${m[1]}.${BLOCK[m[2]]}.${suffix}`;
  if (heads && m[2] === 'attn_q') return { hfName, unpermuteHeads: heads.q };
  if (heads && m[2] === 'attn_k') return { hfName, unpermuteHeads: heads.kv };
  return { hfName };
}
