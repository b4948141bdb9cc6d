/**
 * In-place collectives on tensors that are views, or that autograd uses:
 * the result is written through the view into the storage it shares, and
 * autograd sees the write (the reduced values flow forward; a value that a
 * backward pass saved before the write is reported, not silently used).
 */
import { describe, expect, it } from 'vitest';
import { AutogradError, tensor, testing, type Tensor } from '@dtlab/tensor';
import { allReduce, broadcast, reduce } from '../src/index.ts';
import { runRanks } from './support/ranks.ts';
import { ALGORITHMS } from './support/reference.ts';

const N = 3;
/** Rank r's 3×4 matrix: element [i, j] is 100r + 4i + j. */
const matrixOf = (r: number): number[][] => [0, 1, 2].map((i) => [0, 1, 2, 3].map((j) => 100 * r + 4 * i + j));
const sumOfMatrices = (): number[][] => matrixOf(0).map((row, i) => row.map((_, j) => [...Array(N).keys()].reduce((s, r) => s + matrixOf(r)[i]![j]!, 0)));
const transposeOf = (m: number[][]): number[][] => m[0]!.map((_, j) => m.map((row) => row[j]!));

describe('a non-contiguous view (a transposed matrix)', () => {
  it.each(ALGORITHMS)('allReduce (%s) writes the result through the view into the base tensor', async (algorithm) => {
    const { values } = await runRanks(N, async (comm) => {
      const base = tensor(matrixOf(comm.rank));
      const view = base.transpose(0, 1);
      expect(view.isContiguous()).toBe(false);
      expect(await allReduce(comm, view, { algorithm })).toBe(view);
      return { view, base };
    });
    for (const { view, base } of values) {
      expect(view.toNested()).toEqual(transposeOf(sumOfMatrices()));
      expect(base.toNested()).toEqual(sumOfMatrices());
    }
  });

  it('broadcast and reduce also write through the view', async () => {
    const { values } = await runRanks(N, async (comm) => {
      const a = tensor(matrixOf(comm.rank));
      const b = tensor(matrixOf(comm.rank));
      await broadcast(comm, a.transpose(0, 1), { src: 2 });
      await reduce(comm, b.transpose(0, 1), { dst: 1 });
      return [a.toNested(), b.toNested()];
    });
    values.forEach(([a, b], r) => {
      expect(a).toEqual(matrixOf(2));
      expect(b).toEqual(r === 1 ? sumOfMatrices() : matrixOf(r));
    });
  });

  it('a strided column of a matrix: only that column of the base changes', async () => {
    const { values } = await runRanks(N, async (comm) => {
      const base = tensor(matrixOf(comm.rank));
      await allReduce(comm, base.slice(1, 2, 3), { op: 'max' });
      return base;
    });
    // Column 2 now holds the largest rank's column; every other column is still this rank's own.
    values.forEach((base, r) => {
      const rows = base.toNested() as number[][];
      expect(rows.map((row) => row[2])).toEqual(matrixOf(N - 1).map((row) => row[2]));
      expect(rows.map((row) => [row[0], row[1], row[3]])).toEqual(matrixOf(r).map((row) => [row[0], row[1], row[3]]));
    });
  });
});

it('a contiguous view with an offset (rows 1..2 of a matrix) is reduced in place and row 0 is untouched', async () => {
  const { values } = await runRanks(N, async (comm) => {
    const base = tensor(matrixOf(comm.rank));
    await allReduce(comm, base.slice(0, 1, 3));
    return base;
  });
  values.forEach((base, r) => expect(base.toNested()).toEqual([matrixOf(r)[0], ...sumOfMatrices().slice(1)]));
});

describe('allReduce and autograd', () => {
  it('values reduced before a forward pass are what the backward pass uses', async () => {
    const { values } = await runRanks(N, async (comm) => {
      const w = tensor([1, 2, 3], { dtype: 'float64' }).mul(comm.rank + 1);
      await allReduce(comm, w, { op: 'avg' }); // the mean of (r + 1)·[1, 2, 3] over r = 0, 1, 2: [2, 4, 6]
      const x = tensor([comm.rank, 1, -1], { dtype: 'float64', requiresGrad: true });
      x.mul(w).sum().backward();
      return { w, grad: x.grad as Tensor };
    });
    for (const { w, grad } of values) {
      testing.assertClose(w, [2, 4, 6]);
      testing.assertClose(grad, [2, 4, 6]);
    }
  });

  it('gradients all-reduced with avg are the average of every rank gradient, as in data-parallel training', async () => {
    // Rank r's loss is sum((x - r)^2) at x = [1, 2]: gradient 2(x - r).
    const { values } = await runRanks(N, async (comm) => {
      const x = tensor([1, 2], { dtype: 'float64', requiresGrad: true });
      x.sub(comm.rank).pow(2).sum().backward();
      await allReduce(comm, x.grad!, { op: 'avg' });
      return x.grad!;
    });
    const mean = (k: number) => [...Array(N).keys()].reduce((s, r) => s + 2 * (k - r), 0) / N;
    for (const g of values) testing.assertClose(g, [mean(1), mean(2)], { rtol: 1e-12 });
  });

  it('reducing a tensor that a recorded op saved for backward makes backward fail instead of using the new values', async () => {
    const { values } = await runRanks(N, async (comm) => {
      const w = tensor([1, 2, 3], { dtype: 'float64' });
      const x = tensor([1, 1, 1], { dtype: 'float64', requiresGrad: true });
      const loss = x.mul(w).sum(); // the gradient of x is w, as it is now
      await allReduce(comm, w);
      try {
        loss.backward();
        return 'backward ran';
      } catch (e) {
        return e instanceof AutogradError ? e.message : `unexpected ${String(e)}`;
      }
    });
    for (const message of values) expect(message).toMatch(/modified in place after the forward pass used it/);
  });
});
