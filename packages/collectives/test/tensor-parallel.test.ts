/**
 * Megatron's conjugate operators as custom autograd functions whose
 * backward (or forward) communicates, around a column- then row-parallel
 * MLP, as picotron's tp_communications.py writes them:
 *
 * - f, "copy to the parallel region": identity forward, all-reduce of the
 *   gradient backward (each rank's part of the input's gradient is partial);
 * - g, "reduce from the parallel region": all-reduce forward (each rank's
 *   output is a partial sum), identity backward.
 *
 * On 2 and 4 ranks the loss and every gradient (the shards of the weights,
 * the replicated bias and the input) must equal a single process's, within
 * float64 rounding (the all-reduce adds in another order).
 */
import { describe, expect, it } from 'vitest';
import { autograd, chunkBounds, randn, testing, type Tensor } from '@dtlab/tensor';
import type { Comm } from '@dtlab/runtime';
import { allReduce } from '../src/index.ts';
import { runRanks } from './support/ranks.ts';

/** f: identity forward, all-reduce backward. */
class CopyToParallel extends autograd.Function {
  static override forward(ctx: autograd.FunctionCtx, x: Tensor, comm: Comm): Tensor {
    ctx.comm = comm;
    return x;
  }
  static override async backward(ctx: autograd.FunctionCtx, g: Tensor): Promise<(Tensor | null)[]> {
    const sum = g.clone();
    await allReduce(ctx.comm as Comm, sum);
    return [sum, null];
  }
}

/** g: all-reduce forward, identity backward. */
class ReduceFromParallel extends autograd.Function {
  static override async forward(_ctx: autograd.FunctionCtx, x: Tensor, comm: Comm): Promise<Tensor> {
    const sum = x.detach().clone();
    await allReduce(comm, sum);
    return sum;
  }
  static override backward(_ctx: autograd.FunctionCtx, g: Tensor): (Tensor | null)[] {
    return [g, null];
  }
}

const [B, D, H, O] = [5, 6, 12, 3];
const opts = { dtype: 'float64' as const };
/** The full model and data, the same on every rank and in the single process. */
const make = () => ({
  x: randn([B, D], { seed: 1, ...opts }),
  w1: randn([H, D], { seed: 2, ...opts }),
  b1: randn([H], { seed: 3, ...opts }),
  w2: randn([O, H], { seed: 4, ...opts }),
  b2: randn([O], { seed: 5, ...opts }),
  r: randn([B, O], { seed: 6, ...opts }),
});
const leaf = (t: Tensor) => {
  const p = t.detach().clone();
  p.requiresGrad = true;
  return p;
};

/** loss = sum(r · (relu(x·w1ᵀ + b1)·w2ᵀ + b2)) and its gradients, in one process. */
function reference() {
  const m = make();
  const [x, w1, b1, w2, b2] = [m.x, m.w1, m.b1, m.w2, m.b2].map(leaf) as [Tensor, Tensor, Tensor, Tensor, Tensor];
  const loss = x.matmul(w1.transpose(0, 1)).add(b1).relu().matmul(w2.transpose(0, 1)).add(b2).mul(m.r).sum();
  loss.backward();
  return { loss: loss.item(), x: x.grad!, w1: w1.grad!, b1: b1.grad!, w2: w2.grad!, b2: b2.grad! };
}

/** The same model, tensor-parallel: rank r holds rows `chunk r` of w1 and b1 (column-parallel) and those columns of w2 (row-parallel). */
async function parallel(comm: Comm) {
  const m = make();
  const { start, end } = chunkBounds(H, comm.worldSize)[comm.rank]!;
  const x = leaf(m.x);
  const w1 = leaf(m.w1.slice(0, start, end));
  const b1 = leaf(m.b1.slice(0, start, end));
  const w2 = leaf(m.w2.slice(1, start, end));
  const b2 = leaf(m.b2);
  const h = CopyToParallel.apply(x, comm).matmul(w1.transpose(0, 1)).add(b1).relu();
  const z = (await ReduceFromParallel.apply(h.matmul(w2.transpose(0, 1)), comm)).add(b2);
  const loss = z.mul(m.r).sum();
  await loss.backwardAsync();
  return { loss: loss.item(), x: x.grad!, w1: w1.grad!, b1: b1.grad!, w2: w2.grad!, b2: b2.grad!, start, end };
}

describe('Megatron f and g around a column- then row-parallel MLP', () => {
  for (const n of [2, 4]) {
    it(`on ${n} ranks gives the single-process loss and gradients`, async () => {
      const single = await runRanks(1, async () => reference(), { device: 'course' });
      const ref = single.values[0]!;
      const { values, result } = await runRanks(n, parallel, { device: 'course' });
      const tol = { rtol: 1e-12, atol: 1e-12 };
      for (const [rank, v] of values.entries()) {
        expect(v.loss, `rank ${rank}: loss`).toBeCloseTo(ref.loss, 10);
        testing.assertClose(v.x, ref.x, { ...tol, label: `rank ${rank}: x.grad (all-reduced by f's backward)` });
        testing.assertClose(v.b2, ref.b2, { ...tol, label: `rank ${rank}: b2.grad (replicated)` });
        testing.assertClose(v.w1, ref.w1.slice(0, v.start, v.end), { ...tol, label: `rank ${rank}: its rows of w1.grad` });
        testing.assertClose(v.b1, ref.b1.slice(0, v.start, v.end), { ...tol, label: `rank ${rank}: its part of b1.grad` });
        testing.assertClose(v.w2, ref.w2.slice(1, v.start, v.end), { ...tol, label: `rank ${rank}: its columns of w2.grad` });
      }
      // One all-reduce in forward (g) and one in backward (f), each a ring of 2(n-1) steps per rank.
      expect(result.trace).toHaveLength(2 * n * 2 * (n - 1));
      // The ranks' matmuls are the single process's, split along the hidden dimension: their FLOPs add up to its.
      const matmulFlops = (d: { ops: { kind: string; flops: number }[] }) => d.ops.find((o) => o.kind === 'matmul')!.flops;
      expect(result.device!.ranks.reduce((s, d) => s + matmulFlops(d), 0)).toBe(matmulFlops(single.result.device!.ranks[0]!));
    });
  }
});
