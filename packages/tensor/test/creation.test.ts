/**
 * Creating tensors: from numbers, nested arrays and typed arrays; constant
 * fills and ranges; default dtype float32 as in torch; and the basic
 * properties every tensor reports.
 */
import { describe, expect, it } from 'vitest';
import { Tensor, arange, full, ones, tensor, zeros, zerosLike } from '../src/index.ts';

describe('tensor()', () => {
  it('infers the shape of nested arrays and stores row-major', () => {
    const t = tensor([[[1, 2]], [[3, 4]], [[5, 6]]]);
    expect(t.shape).toEqual([3, 1, 2]);
    expect(t.toArray()).toEqual([1, 2, 3, 4, 5, 6]);
    expect(t.toNested()).toEqual([[[1, 2]], [[3, 4]], [[5, 6]]]);
  });

  it('makes a scalar of a number and an empty 1-D tensor of []', () => {
    const s = tensor(2.5);
    expect(s.shape).toEqual([]);
    expect(s.ndim).toBe(0);
    expect(s.numel).toBe(1);
    expect(s.item()).toBe(2.5);
    expect(s.toNested()).toBe(2.5);
    expect(tensor([]).shape).toEqual([0]);
    expect(tensor([]).numel).toBe(0);
  });

  it('defaults to float32 (values rounded to float32), with float64 on request', () => {
    expect(tensor([0.1]).dtype).toBe('float32');
    expect(tensor([0.1]).toArray()).toEqual([Math.fround(0.1)]);
    const d = tensor([0.1], { dtype: 'float64' });
    expect(d.dtype).toBe('float64');
    expect(d.toArray()).toEqual([0.1]);
  });

  it('takes its dtype from a typed array, and copies it', () => {
    const src = new Float64Array([1, 2, 3, 4]);
    const t = tensor(src, { shape: [2, 2] });
    expect(t.dtype).toBe('float64');
    expect(t.shape).toEqual([2, 2]);
    src[0] = 99;
    expect(t.toArray()).toEqual([1, 2, 3, 4]);
    expect(tensor(new Float32Array([1])).dtype).toBe('float32');
    expect(tensor(new Float64Array([1]), { dtype: 'float32' }).dtype).toBe('float32');
  });

  it('gives flat data a shape', () => {
    expect(tensor([1, 2, 3, 4, 5, 6], { shape: [3, 2] }).toNested()).toEqual([[1, 2], [3, 4], [5, 6]]);
  });

  it('creates a leaf that requires grad on request', () => {
    const t = tensor([1], { requiresGrad: true });
    expect(t.requiresGrad).toBe(true);
    expect(t.isLeaf).toBe(true);
    expect(t.grad).toBeNull();
    expect(tensor([1]).requiresGrad).toBe(false);
  });
});

describe('constant factories', () => {
  it('zeros, ones and full fill a shape with one value', () => {
    expect(zeros([2, 3]).toArray()).toEqual(new Array(6).fill(0));
    expect(ones([2, 1]).toArray()).toEqual([1, 1]);
    expect(full([2, 2], -3.5).toArray()).toEqual([-3.5, -3.5, -3.5, -3.5]);
    expect(zeros([2, 3]).shape).toEqual([2, 3]);
    expect(zeros([]).shape).toEqual([]);
    expect(zeros([0, 4]).numel).toBe(0);
  });

  it('honour dtype and requiresGrad', () => {
    expect(ones([2], { dtype: 'float64' }).dtype).toBe('float64');
    expect(full([1], 0.1).toArray()).toEqual([Math.fround(0.1)]);
    expect(zeros([1], { requiresGrad: true }).requiresGrad).toBe(true);
  });

  it('zerosLike copies shape and dtype', () => {
    const z = zerosLike(tensor([[1, 2]], { dtype: 'float64' }));
    expect(z.shape).toEqual([1, 2]);
    expect(z.dtype).toBe('float64');
    expect(z.toArray()).toEqual([0, 0]);
  });

  it('arange(n) counts 0..n-1 and rejects a negative or fractional n', () => {
    expect(arange(5).toArray()).toEqual([0, 1, 2, 3, 4]);
    expect(arange(0).shape).toEqual([0]);
    expect(() => arange(-1)).toThrow(RangeError);
    expect(() => arange(2.5)).toThrow(/non-negative integer/);
  });
});

describe('tensor properties', () => {
  it('numel, ndim and nbytes follow the shape and dtype', () => {
    const t = zeros([2, 3, 4], { dtype: 'float64' });
    expect(t.numel).toBe(24);
    expect(t.ndim).toBe(3);
    expect(t.nbytes).toBe(24 * 8);
    // nbytes counts the view's elements, not the whole storage.
    expect(zeros([10]).slice(0, 0, 3).nbytes).toBe(12);
  });

  it('a fresh tensor has row-major strides and is contiguous; a transpose is not', () => {
    const t = zeros([2, 3, 4]);
    expect(t.strides).toEqual([12, 4, 1]);
    expect(t.isContiguous()).toBe(true);
    expect(t.transpose(0, 1).isContiguous()).toBe(false);
  });

  it('data() returns the storage itself for a whole contiguous tensor and a copy for a view', () => {
    const t = tensor([1, 2, 3]);
    expect(t.data()).toBe(t.data());
    const v = t.slice(0, 1);
    expect(v.data()).not.toBe(t.data());
    expect(Array.from(v.data())).toEqual([2, 3]);
  });

  it('prints like torch', () => {
    expect(tensor([[1, 2], [3, 4]]).toString()).toBe('tensor([[1., 2.],\n        [3., 4.]])');
    expect(tensor([0.5], { dtype: 'float64', requiresGrad: true }).toString()).toBe('tensor([0.5000], dtype=float64, requiresGrad=true)');
    expect(tensor([1], { requiresGrad: true }).mul(2).toString()).toBe('tensor([2.], gradFn=mul)');
  });

  it('shape and strides are frozen', () => {
    const t: Tensor = zeros([2]);
    expect(Object.isFrozen(t.shape)).toBe(true);
    expect(Object.isFrozen(t.strides)).toBe(true);
  });
});
