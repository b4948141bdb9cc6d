/**
 * Broadcasting follows NumPy: shapes align on the right, each pair of sizes
 * must match or one must be 1, and a size-1 (or missing) dim repeats.
 * The reference visits every output index and reads each operand naively.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { ShapeError, Tensor, broadcastShapes, tensor } from '../src/index.ts';
import { binaryRef, broadcastRef, indices, numel, ravel, smallInts } from './support/reference.ts';
import { broadcastPairArb, incompatiblePairArb } from './support/arbitraries.ts';

const ops: [string, (a: Tensor, b: Tensor) => Tensor, (x: number, y: number) => number][] = [
  ['add', (a, b) => a.add(b), (x, y) => x + y],
  ['sub', (a, b) => a.sub(b), (x, y) => x - y],
  ['mul', (a, b) => a.mul(b), (x, y) => x * y],
];

describe('broadcasting of elementwise ops', () => {
  for (const [name, op, f] of ops) {
    it(`${name} agrees with a naive index-by-index reference for any compatible shapes`, () => {
      fc.assert(
        fc.property(broadcastPairArb, fc.nat(1000), ([sa, sb], seed) => {
          const da = smallInts(numel(sa), seed);
          const db = smallInts(numel(sb), seed + 1);
          const out = op(tensor(da, { shape: sa }), tensor(db, { shape: sb }));
          const ref = binaryRef(da, sa, db, sb, f);
          expect(out.shape).toEqual(ref.shape);
          expect(out.toArray()).toEqual(ref.data);
        }),
        { seed: 101, numRuns: 150 },
      );
    });
  }

  it('reads non-contiguous operands (permuted views) by their logical index', () => {
    fc.assert(
      fc.property(broadcastPairArb, fc.nat(1000), ([sa, sb], seed) => {
        const da = smallInts(numel(sa), seed);
        // b is a permuted view: stored with its dims reversed, then permuted back.
        const reversed = [...sb].reverse();
        const stored = smallInts(numel(sb), seed + 7);
        const order = sb.map((_, i) => sb.length - 1 - i);
        const b = tensor(stored, { shape: reversed }).permute(order);
        const logicalB = indices(sb).map((idx) => stored[ravel([...idx].reverse(), reversed)]!);
        const out = tensor(da, { shape: sa }).mul(b);
        const ref = binaryRef(da, sa, logicalB, sb, (x, y) => x * y);
        expect(out.shape).toEqual(ref.shape);
        expect(out.toArray()).toEqual(ref.data);
      }),
      { seed: 102, numRuns: 100 },
    );
  });

  it('div broadcasts like the other ops', () => {
    const a = tensor([[1], [2], [4]]);
    const b = tensor([1, 2, 4, 8]);
    const ref = binaryRef([1, 2, 4], [3, 1], [1, 2, 4, 8], [4], (x, y) => x / y);
    expect(a.div(b).shape).toEqual([3, 4]);
    expect(a.div(b).toArray()).toEqual(ref.data);
  });

  it('a number operand acts as a scalar tensor', () => {
    expect(tensor([[1, 2], [3, 4]]).sub(1).toArray()).toEqual([0, 1, 2, 3]);
    expect(tensor([2, 4]).pow(2).toArray()).toEqual([4, 16]);
  });
});

describe('broadcastShapes', () => {
  it('matches the reference rule and is symmetric', () => {
    fc.assert(
      fc.property(broadcastPairArb, ([a, b]) => {
        const ab = broadcastShapes('test', a, b);
        expect(ab).toEqual(broadcastRef(a, b));
        expect(broadcastShapes('test', b, a)).toEqual(ab);
      }),
      { seed: 103, numRuns: 300 },
    );
  });

  it('keeps size-0 dims (0 broadcasts only against 0 or 1)', () => {
    expect(broadcastShapes('test', [0, 3], [1, 3])).toEqual([0, 3]);
    expect(broadcastShapes('test', [2, 0], [1])).toEqual([2, 0]);
    expect(() => broadcastShapes('test', [0], [2])).toThrow(ShapeError);
  });

  it('throws a ShapeError naming the op and both shapes for incompatible shapes', () => {
    fc.assert(
      fc.property(incompatiblePairArb, ([a, b]) => {
        expect(broadcastRef(a, b)).toBeNull();
        let caught: unknown;
        try {
          broadcastShapes('add', a, b);
        } catch (e) {
          caught = e;
        }
        expect(caught).toBeInstanceOf(ShapeError);
        const err = caught as ShapeError;
        expect(err.op).toBe('add');
        expect(err.shapes).toEqual([a, b]);
        expect(err.message).toContain(`[${a.join(',')}]`);
        expect(err.message).toContain(`[${b.join(',')}]`);
      }),
      { seed: 104, numRuns: 200 },
    );
  });

  it('the elementwise ops throw the same ShapeError', () => {
    fc.assert(
      fc.property(incompatiblePairArb, ([a, b]) => {
        expect(() => tensor(smallInts(numel(a), 1), { shape: a }).add(tensor(smallInts(numel(b), 2), { shape: b }))).toThrow(ShapeError);
      }),
      { seed: 105, numRuns: 100 },
    );
  });
});
