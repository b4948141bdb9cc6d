/**
 * sum, mean and max reduce one dim, a list of dims, or everything, with or
 * without keepdim, and agree with a naive loop over every index.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { ShapeError, tensor } from '../src/index.ts';
import { indices, numel, ravel, reduceRef, smallInts, unravel } from './support/reference.ts';
import { shapeArb } from './support/arbitraries.ts';

/** A shape, a non-empty set of its dims (sorted or not), keepdim, and a data seed. */
const reductionArb = (minDim: number) =>
  shapeArb({ minRank: 1, maxRank: 4, minDim, maxDim: 4 }).chain((shape) =>
    fc.record({
      shape: fc.constant(shape),
      dims: fc.shuffledSubarray(
        shape.map((_, i) => i),
        { minLength: 1 },
      ),
      negative: fc.boolean(),
      keepdim: fc.boolean(),
      seed: fc.nat(1000),
      transposed: fc.boolean(),
    }),
  );

/** The input as a tensor; optionally a transposed view holding the same logical values. */
function input(data: number[], shape: number[], transposed: boolean) {
  if (!transposed || shape.length < 2) return tensor(data, { dtype: 'float64', shape });
  const swapped = [...shape];
  [swapped[0], swapped[1]] = [shape[1]!, shape[0]!];
  // Store the transpose, so that transposing it back gives `data` in logical order.
  const stored = new Array<number>(data.length);
  indices(shape).forEach(([i, j, ...rest], flat) => (stored[ravel([j!, i!, ...rest], swapped)] = data[flat]!));
  return tensor(stored, { dtype: 'float64', shape: swapped }).transpose(0, 1);
}

describe('sum', () => {
  it('matches a naive reference for random shapes, any dims, keepdim, and strided input', () => {
    fc.assert(
      fc.property(reductionArb(0), ({ shape, dims, negative, keepdim, seed, transposed }) => {
        const data = smallInts(numel(shape), seed);
        const t = input(data, shape, transposed);
        const arg = dims.map((d) => (negative ? d - shape.length : d));
        const out = t.sum(arg.length === 1 ? arg[0]! : arg, keepdim);
        const ref = reduceRef(data, shape, dims, keepdim, 0, (a, x) => a + x);
        expect(out.shape).toEqual(ref.shape);
        expect(out.toArray()).toEqual(ref.data);
      }),
      { seed: 401, numRuns: 200 },
    );
  });

  it('over everything returns a scalar; over an empty tensor returns 0', () => {
    const t = tensor([[1, 2, 3], [4, 5, 6]]);
    expect(t.sum().shape).toEqual([]);
    expect(t.sum().item()).toBe(21);
    expect(t.sum(undefined, true).shape).toEqual([1, 1]);
    expect(tensor([]).sum().item()).toBe(0);
  });

  it('accumulates float32 in float64 (one rounding at the end)', () => {
    // 2^24 + 1 + 1 - 2^24: float32 accumulation would lose both 1s.
    expect(tensor([16777216, 1, 1, -16777216]).sum().item()).toBe(2);
  });
});

describe('mean', () => {
  it('is the sum divided by the number of reduced elements', () => {
    fc.assert(
      fc.property(reductionArb(1), ({ shape, dims, keepdim, seed, transposed }) => {
        const data = smallInts(numel(shape), seed);
        const out = input(data, shape, transposed).mean(dims, keepdim);
        const count = numel(dims.map((d) => shape[d]!));
        const ref = reduceRef(data, shape, dims, keepdim, 0, (a, x) => a + x);
        expect(out.shape).toEqual(ref.shape);
        expect(out.toArray()).toEqual(ref.data.map((s) => s / count));
      }),
      { seed: 402, numRuns: 200 },
    );
  });

  it('of an empty tensor is NaN (0 / 0), as in torch', () => {
    expect(tensor([]).mean().item()).toBeNaN();
  });
});

describe('max', () => {
  it('matches a naive reference along any single dim, with and without keepdim', () => {
    fc.assert(
      fc.property(reductionArb(1), ({ shape, dims, negative, keepdim, seed, transposed }) => {
        const data = smallInts(numel(shape), seed);
        const dim = dims[0]!;
        const out = input(data, shape, transposed).max(negative ? dim - shape.length : dim, keepdim);
        const ref = reduceRef(data, shape, [dim], keepdim, -Infinity, Math.max);
        expect(out.shape).toEqual(ref.shape);
        expect(out.toArray()).toEqual(ref.data);
      }),
      { seed: 403, numRuns: 200 },
    );
  });

  it('over everything is the largest element', () => {
    fc.assert(
      fc.property(reductionArb(1), ({ shape, seed, transposed }) => {
        const data = smallInts(numel(shape), seed);
        expect(input(data, shape, transposed).max().item()).toBe(Math.max(...data));
      }),
      { seed: 404, numRuns: 100 },
    );
  });

  it('propagates NaN: a row holding NaN has max NaN, wherever the NaN is', () => {
    const t = tensor([
      [NaN, 1, 2],
      [1, NaN, 2],
      [1, 2, NaN],
      [1, 5, 2],
    ]);
    const rows = t.max(1).toArray();
    expect(rows.slice(0, 3).every(Number.isNaN)).toBe(true);
    expect(rows[3]).toBe(5);
    expect(t.max().item()).toBeNaN();
  });

  it('of an empty tensor throws a ShapeError', () => {
    expect(() => tensor([]).max()).toThrow(ShapeError);
  });

  it('full-reduction gradient is split evenly among tied maxima', () => {
    const x = tensor([[1, 3, 0], [3, 2, 3]], { dtype: 'float64', requiresGrad: true });
    x.max().backward();
    expect(x.grad!.toArray()).toEqual([0, 1 / 3, 0, 1 / 3, 0, 1 / 3]);
  });

  it('full-reduction gradient of a NaN maximum goes to the NaN elements, as in torch', () => {
    const x = tensor([1, NaN, 3, NaN], { dtype: 'float64', requiresGrad: true });
    x.max().backward();
    expect(x.grad!.toArray()).toEqual([0, 0.5, 0, 0.5]);
  });

  it('gradient along a dim goes to the first maximal element of each slice', () => {
    const x = tensor([[4, 1, 4], [0, 2, 2]], { dtype: 'float64', requiresGrad: true });
    x.max(1).backward(tensor([10, 20], { dtype: 'float64' }));
    expect(x.grad!.toArray()).toEqual([10, 0, 0, 0, 20, 0]);
  });
});

describe('argmax', () => {
  it('is the position of the first maximum, flat or along a dim', () => {
    fc.assert(
      fc.property(reductionArb(1), ({ shape, dims, seed }) => {
        const data = smallInts(numel(shape), seed);
        const flatRef = data.indexOf(Math.max(...data));
        expect(tensor(data, { shape }).argmax()).toEqual([flatRef]);
        const dim = dims[0]!;
        const keep = shape.map((d, i) => (i === dim ? 1 : d));
        const expected = indices(keep).map((idx) => {
          const line = Array.from({ length: shape[dim]! }, (_, k) => data[ravel(idx.map((v, d) => (d === dim ? k : v)), shape)]!);
          return line.indexOf(Math.max(...line));
        });
        expect(tensor(data, { shape }).argmax(dim)).toEqual(expected);
      }),
      { seed: 405, numRuns: 100 },
    );
  });

  it('on a small example', () => {
    const t = tensor([[1, 9, 9], [7, 2, 3]]);
    expect(t.argmax()).toEqual([1]);
    expect(t.argmax(1)).toEqual([1, 0]);
    expect(t.argmax(0)).toEqual([1, 0, 0]);
    expect(unravel(t.argmax()[0]!, [2, 3])).toEqual([0, 1]);
  });
});

describe('reduction dims', () => {
  it('naming a dim twice or out of range throws a ShapeError', () => {
    const t = tensor([[1, 2], [3, 4]]);
    expect(() => t.sum([0, -2])).toThrow(/names a dimension twice/);
    expect(() => t.sum(2)).toThrow(ShapeError);
    expect(() => t.max(-3)).toThrow(/out of range/);
  });
});
