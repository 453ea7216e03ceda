// lib/online-softmax.wgsl: the running softmax of flash attention, 4 scores at a time.
// State: m = max score so far, l = sum of exp(score - m) so far. Adding 4 scores s (masked ones invalid):
//   m' = max(m, max(s))   c = exp(m - m')   pr = exp(s - m') (0 where invalid)   l' = l * c + sum(pr)
// and the caller rescales its accumulator: acc' = acc * c + sum_j pr_j v_j. After the last key,
// out = acc / l (a query with no valid key has l = 0 and gets zeros).

const SOFTMAX_NEG_BIG: f32 = -3.402823e38;

struct OnlineSoftmax { m: f32, l: f32 }

struct SoftmaxWeights { c: f32, pr: vec4<f32> }

fn online_softmax_start() -> OnlineSoftmax {
  return OnlineSoftmax(SOFTMAX_NEG_BIG, 0.0);
}

fn online_softmax_add4(st: ptr<function, OnlineSoftmax>, scores: vec4<f32>, valid: vec4<bool>) -> SoftmaxWeights {
  let s = select(vec4<f32>(SOFTMAX_NEG_BIG), scores, valid);
  let mNew = max((*st).m, max(max(s.x, s.y), max(s.z, s.w)));
  let c = exp((*st).m - mNew);
  let pr = select(vec4<f32>(0.0), exp(s - vec4<f32>(mNew)), valid);
  (*st).l = (*st).l * c + (pr.x + pr.y) + (pr.z + pr.w);
  (*st).m = mNew;
  return SoftmaxWeights(c, pr);
}

/** 1 / l, or 0 when no key was valid. */
fn online_softmax_inverse(st: OnlineSoftmax) -> f32 {
  return select(0.0, 1.0 / st.l, st.l > 0.0);
}
