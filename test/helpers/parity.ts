// What the parity tests (a backend against the PyTorch goldens) share: the tolerance, the comparison that
// fails with a readable description, and the golden request (the sample image and its question).

import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { compareClose, describeComparison } from '../../src/selfcheck/compare';

/** Tensors against the float64 reference: f32 noise and reduction order stay within this. */
export const PARITY_TOL = { atol: 1e-4, rtol: 1e-3 };

export function expectClose(
  label: string,
  got: ArrayLike<number>,
  want: ArrayLike<number>,
  tol: { atol: number; rtol: number } = PARITY_TOL,
): void {
  const c = compareClose(got, want, tol);
  if (!c.pass) throw new Error(describeComparison(label, c, tol));
}

/** The goldens' request: public/sample.png and "Can you describe this image?". */
export const SAMPLE_MESSAGES = [
  {
    role: 'user' as const,
    content: [
      { type: 'image' as const, image: readFileSync(resolve(import.meta.dirname, '../../public/sample.png')) },
      { type: 'text' as const, text: 'Can you describe this image?' },
    ],
  },
];
