/**
 * Elementwise ops compute the textbook function of each element, in the
 * tensor's dtype, and binary ops promote float32 with float64 to float64.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Tensor, tensor } from '../src/index.ts';

const unaryOps: [string, (t: Tensor) => Tensor, (x: number) => number, fc.Arbitrary<number>][] = [
  ['neg', (t) => t.neg(), (x) => -x, fc.double({ min: -1e6, max: 1e6, noNaN: true })],
  ['exp', (t) => t.exp(), Math.exp, fc.double({ min: -50, max: 50, noNaN: true })],
  ['log', (t) => t.log(), Math.log, fc.double({ min: 1e-6, max: 1e6, noNaN: true })],
  ['sqrt', (t) => t.sqrt(), Math.sqrt, fc.double({ min: 0, max: 1e6, noNaN: true })],
  ['tanh', (t) => t.tanh(), Math.tanh, fc.double({ min: -20, max: 20, noNaN: true })],
  ['relu', (t) => t.relu(), (x) => (x > 0 ? x : 0), fc.double({ min: -10, max: 10, noNaN: true })],
  ['sigmoid', (t) => t.sigmoid(), (x) => 1 / (1 + Math.exp(-x)), fc.double({ min: -30, max: 30, noNaN: true })],
];

describe('unary ops', () => {
  for (const [name, op, ref, values] of unaryOps) {
    it(`${name} matches the textbook formula elementwise (float64)`, () => {
      fc.assert(
        fc.property(fc.array(values, { minLength: 1, maxLength: 20 }), (xs) => {
          const out = op(tensor(xs, { dtype: 'float64' })).toArray();
          out.forEach((y, i) => {
            const want = ref(xs[i]!);
            expect(Math.abs(y - want)).toBeLessThanOrEqual(1e-14 * Math.max(1, Math.abs(want)));
          });
        }),
        { seed: 901, numRuns: 50 },
      );
    });

    it(`${name} keeps float32 and rounds its result to float32`, () => {
      const xs = [0.25, 0.5, 1.5, 3];
      const out = op(tensor(xs));
      expect(out.dtype).toBe('float32');
      out.toArray().forEach((y, i) => {
        const want = ref(xs[i]!);
        expect(Math.abs(y - want)).toBeLessThanOrEqual(1e-7 * Math.max(1, Math.abs(want)));
      });
    });
  }

  it('sigmoid saturates to exactly 0 and 1 without NaN for huge inputs', () => {
    expect(tensor([-1000, 1000], { dtype: 'float64' }).sigmoid().toArray()).toEqual([0, 1]);
  });

  it('relu keeps NaN', () => {
    expect(tensor([NaN, -1, 2]).relu().toArray()).toEqual([NaN, 0, 2]);
  });

  it('ops apply to the logical elements of a strided view', () => {
    const t = tensor([[1, 4], [9, 16]], { dtype: 'float64' }).transpose();
    expect(t.sqrt().toArray()).toEqual([1, 3, 2, 4]);
  });
});

describe('binary ops', () => {
  it('pow and div follow Math.pow and /', () => {
    const a = tensor([2, 9, 0.5], { dtype: 'float64' });
    expect(a.pow(tensor([3, 0.5, -1], { dtype: 'float64' })).toArray()).toEqual([8, 3, 2]);
    expect(a.div(tensor([4, 3, 0], { dtype: 'float64' })).toArray()).toEqual([0.5, 3, Infinity]);
  });

  it('float32 with float64 promotes to float64, computing from the float32 values', () => {
    const a = tensor([0.1]);
    const b = tensor([0.2], { dtype: 'float64' });
    for (const out of [a.add(b), b.add(a)]) {
      expect(out.dtype).toBe('float64');
      expect(out.item()).toBe(Math.fround(0.1) + 0.2);
    }
  });

  it('a number operand takes the tensor\'s dtype', () => {
    const out = tensor([1]).add(0.1);
    expect(out.dtype).toBe('float32');
    expect(out.item()).toBe(Math.fround(1 + Math.fround(0.1)));
    expect(tensor([1], { dtype: 'float64' }).add(0.1).item()).toBe(1.1);
  });
});
