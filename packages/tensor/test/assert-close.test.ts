/**
 * assertClose passes when every element is within atol + rtol·|expected|,
 * and otherwise throws a ParityError that says where the first difference
 * is, what was expected and what came, and how bad it gets overall.
 */
import { describe, expect, it } from 'vitest';
import { tensor } from '../src/index.ts';
import { ParityError, assertClose } from '../src/testing/index.ts';

function parityErrorOf(fn: () => void): ParityError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(ParityError);
    return e as ParityError;
  }
  throw new Error('expected a ParityError, but nothing was thrown');
}

describe('assertClose passes', () => {
  it('for equal values of any comparable kind', () => {
    assertClose(tensor([[1, 2], [3, 4]]), tensor([[1, 2], [3, 4]]));
    assertClose(tensor([1, 2]), [1, 2]);
    assertClose(new Float64Array([1, 2]), new Float32Array([1, 2]));
    assertClose(3, tensor(3));
    assertClose([Infinity, -Infinity], [Infinity, -Infinity]);
  });

  it('within |actual - expected| <= atol + rtol·|expected|, and fails just outside', () => {
    assertClose([100 + 1 + 0.5], [100], { rtol: 0.01, atol: 0.5 }); // tolerance 1.5
    expect(() => assertClose([100 + 1.6], [100], { rtol: 0.01, atol: 0.5 })).toThrow(ParityError);
    // rtol scales with the expected value, not the actual one.
    assertClose([0.9], [1], { rtol: 0.1, atol: 0 });
    expect(() => assertClose([1], [0.9], { rtol: 0.1, atol: 0 })).toThrow(ParityError);
  });

  it('with torch.allclose\'s defaults rtol 1e-5 and atol 1e-8', () => {
    assertClose([1 + 0.9e-5], [1]);
    expect(() => assertClose([1 + 1.1e-5], [1])).toThrow(ParityError);
    assertClose([0.9e-8], [0]);
    expect(() => assertClose([1.1e-8], [0])).toThrow(ParityError);
  });

  it('for a flat array against a tensor of any shape with the same element count', () => {
    assertClose(tensor([[1, 2, 3], [4, 5, 6]]), [1, 2, 3, 4, 5, 6]);
  });
});

describe('ParityError', () => {
  it('carries the first mismatch: flat index, position, expected, actual', () => {
    const err = parityErrorOf(() => assertClose(tensor([[1, 2, 3], [4, 50, 60]]), tensor([[1, 2, 3], [4, 5, 6]])));
    expect(err.index).toBe(4);
    expect(err.position).toEqual([1, 1]);
    expect(err.expected).toBe(5);
    expect(err.actual).toBe(50);
    const deep = parityErrorOf(() => assertClose(tensor([0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0], { shape: [2, 2, 3] }), tensor(new Array(12).fill(0), { shape: [2, 2, 3] })));
    expect(deep.index).toBe(8);
    expect(deep.position).toEqual([1, 0, 2]);
    expect(deep.message).toContain('index [1,0,2] (flat 8)');
  });

  it('carries maxAbsDiff over all elements and the number of mismatches', () => {
    const err = parityErrorOf(() => assertClose([1, 12, 3, 100], [1, 2, 3, 4]));
    expect(err.maxAbsDiff).toBe(96);
    expect(err.mismatches).toBe(2);
    expect(err.index).toBe(1);
    expect(err.failure).toMatchObject({ kind: 'values', count: 4, rtol: 1e-5, atol: 1e-8 });
  });

  it('has a message naming the index, the expected and the actual value', () => {
    const err = parityErrorOf(() => assertClose(tensor([[0, 0], [0, 7.5]]), tensor([[0, 0], [0, 2.25]])));
    expect(err.message).toContain('index [1,1]');
    expect(err.message).toContain('flat 3');
    expect(err.message).toContain('expected 2.25');
    expect(err.message).toContain('actual 7.5');
    expect(err.message).toContain('1 of 4 elements differ');
  });

  it('prefixes the message with the label, and keeps the label as a field', () => {
    const err = parityErrorOf(() => assertClose([1], [2], { label: 'rank 2 grad of fc1.weight' }));
    expect(err.message.startsWith('rank 2 grad of fc1.weight: ')).toBe(true);
    expect(err.label).toBe('rank 2 grad of fc1.weight');
  });

  it('reports a shape mismatch of two tensors with index -1, even when the element counts agree', () => {
    const err = parityErrorOf(() => assertClose(tensor([[1, 2, 3], [4, 5, 6]]), tensor([[1, 2], [3, 4], [5, 6]]), { label: 'out' }));
    expect(err.index).toBe(-1);
    expect(err.message).toContain('out: shape mismatch: expected [3,2]');
    expect(err.message).toContain('actual [2,3]');
    expect(err.failure).toEqual({ kind: 'shape', label: 'out', expectedShape: [3, 2], actualShape: [2, 3], expectedCount: 6, actualCount: 6 });
    expect(err.reason).toBe('shape mismatch: expected [3,2] (6 elements), actual [2,3] (6 elements)');
    const counts = parityErrorOf(() => assertClose([1, 2, 3], [1, 2]));
    expect(counts.index).toBe(-1);
    expect(counts.message).toContain('(2 elements)');
  });

  it('ignores elements that are exactly equal, infinities included, when computing maxAbsDiff', () => {
    const err = parityErrorOf(() => assertClose([Infinity, 1, -Infinity], [Infinity, 3, -Infinity]));
    expect(err.index).toBe(1);
    expect(err.maxAbsDiff).toBe(2);
  });

  it('an infinite expected value matches only itself (rtol·∞ is no tolerance)', () => {
    expect(parityErrorOf(() => assertClose([-Infinity], [Infinity])).maxAbsDiff).toBe(Infinity);
    expect(parityErrorOf(() => assertClose([0], [Infinity])).actual).toBe(0);
    expect(parityErrorOf(() => assertClose([1e300], [-Infinity], { rtol: 1 })).index).toBe(0);
    expect(() => assertClose([Infinity], [1e300], { rtol: 0.5 })).toThrow(ParityError);
  });
});

describe('NaN handling', () => {
  it('NaN never equals NaN by default, and maxAbsDiff becomes NaN', () => {
    const err = parityErrorOf(() => assertClose([1, NaN], [1, NaN]));
    expect(err.index).toBe(1);
    expect(err.maxAbsDiff).toBeNaN();
  });

  it('equalNan treats NaN as equal to NaN, but not to a number', () => {
    assertClose([1, NaN], [1, NaN], { equalNan: true });
    const err = parityErrorOf(() => assertClose([NaN, 2], [1, 2], { equalNan: true }));
    expect(err.index).toBe(0);
    expect(err.actual).toBeNaN();
    expect(err.expected).toBe(1);
    expect(parityErrorOf(() => assertClose([1], [NaN], { equalNan: true })).expected).toBeNaN();
  });

  it('a NaN mismatch does not hide a later finite one from the count', () => {
    const err = parityErrorOf(() => assertClose([NaN, 5], [0, 0]));
    expect(err.mismatches).toBe(2);
  });
});
