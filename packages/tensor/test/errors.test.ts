/**
 * Errors teach: they are classes with structured fields, and their messages
 * name the op, the shapes or index involved, expected and got.
 */
import { describe, expect, it } from 'vitest';
import { AutogradError, ShapeError, Tensor, arange, tensor, zeros, type NestedArray } from '../src/index.ts';

function errorOf(fn: () => unknown): Error {
  try {
    fn();
  } catch (e) {
    return e as Error;
  }
  throw new Error('expected an error, but nothing was thrown');
}

describe('ShapeError', () => {
  it('matmul names both shapes and the inner sizes that do not align', () => {
    const err = errorOf(() => zeros([3, 4]).matmul(zeros([5, 2]))) as ShapeError;
    expect(err).toBeInstanceOf(ShapeError);
    expect(err.name).toBe('ShapeError');
    expect(err.message).toContain('matmul: shapes [3,4] and [5,2] do not align: 4 != 5');
    expect(err.op).toBe('matmul');
    expect(err.shapes).toEqual([[3, 4], [5, 2]]);
  });

  it('a broadcast failure names the op, both shapes, and the dim', () => {
    const err = errorOf(() => zeros([2, 3]).add(zeros([4]))) as ShapeError;
    expect(err.message).toContain('add: shapes [2,3] and [4] cannot broadcast: size 3 != 4 at dim -1');
    expect(errorOf(() => zeros([2, 3]).mul(zeros([3, 3]))).message).toMatch(/^mul: /);
  });

  it('reshape to a different element count names both shapes and counts', () => {
    const err = errorOf(() => arange(12).reshape(4, 4));
    expect(err).toBeInstanceOf(ShapeError);
    expect(err.message).toBe('reshape: shape [4,4] has 16 elements but the tensor [12] has 12');
    expect(errorOf(() => arange(12).reshape(5, -1)).message).toContain('cannot infer -1 in [5,-1] for 12 elements');
    expect(errorOf(() => arange(12).reshape(-1, -1)).message).toContain('only one dimension can be -1');
  });

  it('cat names the mismatched tensor, both shapes and the cat dim', () => {
    const err = errorOf(() => Tensor.cat([zeros([2, 3]), zeros([2, 4])]));
    expect(err).toBeInstanceOf(ShapeError);
    expect(err.message).toBe('cat: tensor 1 has shape [2,4] but tensor 0 has [2,3]; sizes must match except in dim 0');
    expect(errorOf(() => Tensor.cat([zeros([2]), zeros([2, 1])], 0)).message).toContain('tensor 1 has shape [2,1]');
    expect(errorOf(() => Tensor.cat([])).message).toBe('cat: needs at least one tensor');
  });

  it('a dim out of range names the op, the dim and the rank', () => {
    expect(errorOf(() => zeros([2, 3]).transpose(0, 2)).message).toBe('transpose: dim 2 is out of range for a tensor with 2 dimension(s)');
    expect(errorOf(() => zeros([2, 3]).sum(-3))).toBeInstanceOf(ShapeError);
    expect(errorOf(() => zeros([2, 3]).slice(2, 0, 1)).message).toMatch(/^slice: dim 2/);
  });

  it('permute, expand and flatten explain what was wrong with their arguments', () => {
    expect(errorOf(() => zeros([2, 3]).permute(0, 0)).message).toContain('dims [0,0] are not a permutation of the 2 dimensions of [2,3]');
    expect(errorOf(() => zeros([2, 3]).expand(4, 3)).message).toContain('cannot expand [2,3] to [4,3]: size 2 != 4 at dim 0');
    expect(errorOf(() => zeros([2, 3]).expand(3)).message).toContain('cannot expand [2,3] to fewer dimensions [3]');
    expect(errorOf(() => zeros([2, 3, 4]).flatten(2, 1)).message).toContain('endDim 1 comes before startDim 2');
  });

  it('expand rejects a negative size, and -1 in a new leading dim (there is no size to keep)', () => {
    expect(errorOf(() => zeros([2]).expand(-1, 2))).toBeInstanceOf(ShapeError);
    expect(errorOf(() => zeros([1]).expand(-2)).message).toContain('size -2 at dim 0 is not allowed');
  });

  it('cat of 0-D tensors says to unsqueeze them', () => {
    const err = errorOf(() => Tensor.cat([tensor(1), tensor(2)]));
    expect(err).toBeInstanceOf(ShapeError);
    expect(err.message).toContain('unsqueeze(0)');
  });

  it('a negative or fractional size is rejected with the shape it got', () => {
    expect(errorOf(() => zeros([2, -1])).message).toBe('zeros: shape must be a list of non-negative integers, got [2,-1]');
    expect(errorOf(() => zeros([1.5]))).toBeInstanceOf(ShapeError);
  });
});

describe('tensor() with ragged data', () => {
  it('names the index of the list with the wrong length, and the inferred shape', () => {
    const err = errorOf(() => tensor([[1, 2], [3]]));
    expect(err).toBeInstanceOf(ShapeError);
    expect(err.message).toBe('tensor: ragged data: the list at index [1] has 1 elements, expected 2 (inferred shape [2,2])');
  });

  it('names a deep index', () => {
    expect(errorOf(() => tensor([[[1], [2]], [[3], [4, 5]]])).message).toContain('the list at index [1,1] has 2 elements, expected 1');
  });

  it('names the index where a number was expected', () => {
    expect(errorOf(() => tensor([[1, 2], [3, [4]]] as NestedArray)).message).toContain('expected a number at index [1,1], got an array');
    expect(errorOf(() => tensor([1, 2], { shape: [3] })).message).toContain('shape [3] needs 3 elements, the data has 2');
  });
});

describe('other errors', () => {
  it('item() on a tensor with more than one element says the shape and count', () => {
    const err = errorOf(() => zeros([2, 3]).item());
    expect(err).toBeInstanceOf(RangeError);
    expect(err.message).toBe('item: only a one-element tensor has an item, but this tensor has shape [2,3] (6 elements)');
    expect(tensor([[5]]).item()).toBe(5);
    expect(tensor([1, 2, 3]).slice(0, 2).item()).toBe(3);
  });

  it('AutogradError carries the op', () => {
    const err = errorOf(() => tensor([1], { requiresGrad: true }).add_(1)) as AutogradError;
    expect(err).toBeInstanceOf(AutogradError);
    expect(err.name).toBe('AutogradError');
    expect(err.op).toBe('add_');
    expect(err.message).toMatch(/^add_: a leaf tensor that requires grad/);
  });

  it('an unknown dtype is a TypeError listing the known ones', () => {
    expect(errorOf(() => tensor([1], { dtype: 'int32' as 'float32' })).message).toBe(`tensor: unknown dtype "int32"; use 'float32' or 'float64'`);
  });
});
