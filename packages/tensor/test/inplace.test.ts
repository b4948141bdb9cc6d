/**
 * In-place ops (add_ sub_ mul_ div_ copy_ zero_ fill_) write the broadcast
 * result into the target's own elements, through any view layout, and the
 * write is visible through every other view of the same storage. Autograd
 * refuses them where it could not account for them.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { AutogradError, ShapeError, Tensor, arange, noGrad, tensor } from '../src/index.ts';
import { indices, numel, ravel, readBroadcast, smallInts } from './support/reference.ts';

type BinaryInplace = 'add_' | 'sub_' | 'mul_' | 'div_' | 'copy_';
const refs: Record<BinaryInplace, (x: number, y: number) => number> = {
  add_: (x, y) => x + y,
  sub_: (x, y) => x - y,
  mul_: (x, y) => x * y,
  div_: (x, y) => x / y,
  copy_: (_x, y) => y,
};

/** A target view of a [4,5,3] base: the whole base, a transpose, a slice, or a slice of a permute. */
const targets: { label: string; make: (b: Tensor) => Tensor; source: (idx: number[]) => number[] }[] = [
  { label: 'contiguous', make: (b) => b, source: (i) => i },
  { label: 'transposed view', make: (b) => b.transpose(0, 2), source: ([a, c, d]) => [d!, c!, a!] },
  { label: 'slice', make: (b) => b.slice(1, 1, 4), source: ([a, c, d]) => [a!, c! + 1, d!] },
  { label: 'slice of a permuted view', make: (b) => b.permute(2, 0, 1).slice(-1, 2), source: ([a, c, d]) => [c!, d! + 2, a!] },
  { label: 'contiguous row slice', make: (b) => b.slice(0, 1, 3), source: ([a, c, d]) => [a! + 1, c!, d!] },
];
const BASE = [4, 5, 3];

describe('binary in-place ops', () => {
  it('write op(target, broadcast operand) into exactly the target\'s elements, for every layout', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...targets),
        fc.constantFrom<BinaryInplace>('add_', 'sub_', 'mul_', 'div_', 'copy_'),
        fc.array(fc.boolean(), { minLength: 3, maxLength: 3 }),
        fc.integer({ min: 0, max: 3 }),
        fc.nat(1000),
        (target, op, ones, drop, seed) => {
          const baseData = smallInts(numel(BASE), seed);
          const base = tensor(baseData, { dtype: 'float64', shape: BASE });
          const t = target.make(base);
          const opShape = t.shape.map((d, i) => (ones[i] ? 1 : d)).slice(drop);
          // Nonzero operand values so that div_ stays finite.
          const opData = smallInts(numel(opShape), seed + 1).map((v) => (v === 0 ? 5 : v));
          const ret = t[op](tensor(opData, { dtype: 'float64', shape: opShape }));
          expect(ret).toBe(t);
          const expected = [...baseData];
          for (const idx of indices(t.shape)) {
            const at = ravel(target.source(idx), BASE);
            expected[at] = refs[op](baseData[at]!, readBroadcast(opData, opShape, idx));
          }
          expect(base.toArray()).toEqual(expected);
        },
      ),
      { seed: 601, numRuns: 300 },
    );
  });

  it('add_ and sub_ scale the operand by alpha', () => {
    const t = tensor([1, 2, 3]);
    t.add_(tensor([1, 1, 1]), 10);
    expect(t.toArray()).toEqual([11, 12, 13]);
    t.sub_(2, 3);
    expect(t.toArray()).toEqual([5, 6, 7]);
  });

  it('accept a number operand', () => {
    const t = tensor([[2, 4], [6, 8]]).transpose();
    t.div_(2).mul_(3).add_(1);
    expect(t.toArray()).toEqual([4, 10, 7, 13]);
  });

  it('copy_ converts the dtype of its source', () => {
    const t = tensor([0, 0], { dtype: 'float32' });
    t.copy_(tensor([0.1, 1e40], { dtype: 'float64' }));
    expect(t.dtype).toBe('float32');
    expect(t.toArray()).toEqual([Math.fround(0.1), Infinity]);
  });

  it('read the operand before writing when it overlaps the target (same storage)', () => {
    const t = arange(5, { dtype: 'float64' });
    // t[1:] += t[:-1], computed from the values before the write.
    t.slice(0, 1).add_(t.slice(0, 0, 4));
    expect(t.toArray()).toEqual([0, 1, 3, 5, 7]);
    const m = arange(9, { dtype: 'float64' }).reshape(3, 3);
    m.copy_(m.transpose());
    expect(m.toArray()).toEqual([0, 3, 6, 1, 4, 7, 2, 5, 8]);
  });

  it('throw a ShapeError when the operand does not broadcast to the target\'s shape', () => {
    expect(() => tensor([1, 2, 3]).add_(tensor([1, 2]))).toThrow(ShapeError);
    // Broadcasting would grow the target: [3] with [2,3] gives [2,3].
    expect(() => tensor([1, 2, 3]).mul_(tensor([[1, 2, 3], [4, 5, 6]]))).toThrow(/cannot write a result of shape \[2,3\] into a tensor of shape \[3\]/);
    expect(() => tensor([[1], [2]]).copy_(tensor([1, 2, 3]))).toThrow(ShapeError);
  });
});

describe('fill_ and zero_', () => {
  for (const target of targets) {
    it(`set every element of a ${target.label} and nothing else`, () => {
      const base = arange(numel(BASE), { dtype: 'float64' }).reshape(BASE);
      const t = target.make(base);
      t.fill_(-7);
      const expected = base.toArray().map((_, i) => i);
      for (const idx of indices(t.shape)) expected[ravel(target.source(idx), BASE)] = -7;
      expect(base.toArray()).toEqual(expected);
      t.zero_();
      for (const idx of indices(t.shape)) expected[ravel(target.source(idx), BASE)] = 0;
      expect(base.toArray()).toEqual(expected);
    });
  }
});

describe('views see in-place writes', () => {
  it('a write through one view is visible through another view of the same storage', () => {
    const base = arange(6).reshape(2, 3);
    const col = base.transpose().slice(0, 1, 2); // column 1, as a row
    const row = base.slice(0, 1); // row 1
    col.fill_(-1);
    expect(base.toArray()).toEqual([0, -1, 2, 3, -1, 5]);
    expect(row.toArray()).toEqual([3, -1, 5]);
    row.mul_(10);
    expect(col.toArray()).toEqual([-1, -10]);
  });
});

describe('in-place ops and autograd', () => {
  const ops: [string, (t: Tensor) => unknown][] = [
    ['add_', (t) => t.add_(1)],
    ['sub_', (t) => t.sub_(1)],
    ['mul_', (t) => t.mul_(2)],
    ['div_', (t) => t.div_(2)],
    ['copy_', (t) => t.copy_(tensor([5, 6]))],
    ['zero_', (t) => t.zero_()],
    ['fill_', (t) => t.fill_(3)],
  ];

  for (const [name, op] of ops) {
    it(`${name} on a leaf that requires grad throws an AutogradError outside noGrad and works inside`, () => {
      const p = tensor([1, 2], { requiresGrad: true });
      expect(() => op(p)).toThrow(AutogradError);
      expect(() => op(p)).toThrow(/noGrad/);
      expect(p.toArray()).toEqual([1, 2]);
      const q = tensor([1, 2], { requiresGrad: true });
      const r = tensor([1, 2]);
      noGrad(() => op(q));
      op(r);
      expect(q.toArray()).toEqual(r.toArray());
      expect(q.requiresGrad).toBe(true);
    });
  }

  it('on a non-leaf of the graph throws an AutogradError', () => {
    const y = tensor([1, 2], { requiresGrad: true }).mul(2);
    expect(() => y.add_(1)).toThrow(/part of the autograd graph/);
  });

  it('with an operand that requires grad throws an AutogradError', () => {
    const w = tensor([1, 2], { requiresGrad: true });
    expect(() => tensor([0, 0]).add_(w)).toThrow(/operand requires grad/);
  });

  it('names the parameter in the message when it has a name', () => {
    const p = tensor([1], { requiresGrad: true });
    p.name = 'fc1.weight';
    expect(() => p.mul_(2)).toThrow(/fc1\.weight/);
  });
});
