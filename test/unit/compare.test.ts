import { describe, expect, it } from 'vitest';
import { compareClose, describeComparison, F32_TOLERANCE } from '../../src/selfcheck/compare';

describe('compareClose', () => {
  it('passes values within atol + rtol*|ref|', () => {
    const c = compareClose([1.00005, 2e-6], [1, 0], F32_TOLERANCE);
    expect(c.pass).toBe(true);
    expect(c.maxAbsErr).toBeCloseTo(5e-5, 10);
  });

  it('fails past the tolerance and names the worst index and pairs', () => {
    const c = compareClose([1, 2, 3.5, 4.01], [1, 2, 3, 4], F32_TOLERANCE);
    expect(c.pass).toBe(false);
    expect(c.numMismatched).toBe(2);
    expect(c.worstIndex).toBe(2);
    expect(c.maxAbsErr).toBeCloseTo(0.5, 10);
    const text = describeComparison('matmul M=2', c, F32_TOLERANCE);
    expect(text).toContain('matmul M=2: 2 of 4 values outside');
    expect(text).toContain('worst index 2');
    expect(text).toContain('[2] got 3.5 want 3');
  });

  it('treats NaN and infinities strictly', () => {
    expect(compareClose([NaN], [NaN], F32_TOLERANCE).pass).toBe(true);
    expect(compareClose([0], [NaN], F32_TOLERANCE).pass).toBe(false);
    expect(compareClose([NaN], [0], F32_TOLERANCE).pass).toBe(false);
    expect(compareClose([Infinity], [Infinity], F32_TOLERANCE).pass).toBe(true);
    expect(compareClose([-Infinity], [Infinity], F32_TOLERANCE).pass).toBe(false);
    expect(compareClose([Infinity], [1e30], F32_TOLERANCE).pass).toBe(false);
  });

  it('fails when lengths differ', () => {
    expect(compareClose([1, 2], [1, 2, 3], F32_TOLERANCE).pass).toBe(false);
  });
});
