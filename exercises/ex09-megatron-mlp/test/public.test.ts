/**
 * Public tests of exercise 9. They run your ParallelMLP on 1, 2 and 4 ranks
 * in one thread (the inline backend, so breakpoints and stack traces work)
 * and compare, as picotron tests its tensor-parallel layers, the output and
 * every gradient with the same MLP unsharded in one process: each rank's
 * shards of the weight gradients, the bias gradients, and the gradient of
 * the input, which the layers before the MLP would receive.
 *
 *   pnpm test ex09        run them
 *   pnpm test:ui ex09     open them in the vitest UI
 */
import { describe, expect, it } from 'vitest';
import { launch, type Comm, type TraceEvent } from '@dtlab/runtime';
import { chunkBounds, randn, testing, type Tensor } from '@dtlab/tensor';
import { ParallelMLP, gelu, type MLPWeights } from '../src/megatron-mlp.ts';

const [B, D, H, O] = [5, 6, 12, 4];
const f64 = { dtype: 'float64' as const };
/** float64 and a different order of additions: 1e-9 leaves room for nothing but a mistake. */
const TOL = { rtol: 1e-9, atol: 1e-10 };

function weights(): MLPWeights {
  return { w1: randn([H, D], { seed: 1, ...f64 }).mul(0.4), b1: randn([H], { seed: 2, ...f64 }).mul(0.5), w2: randn([O, H], { seed: 3, ...f64 }).mul(0.3), b2: randn([O], { seed: 4, ...f64 }).mul(0.5) };
}
const input = () => randn([B, D], { seed: 5, ...f64 });
/** The loss is sum(y ⊙ upstream), so dL/dy = upstream. */
const upstream = () => randn([B, O], { seed: 6, ...f64 });

function leaf(t: Tensor): Tensor {
  const p = t.detach().clone();
  p.requiresGrad = true;
  return p;
}

/** The unsharded MLP in one process: output and gradients. */
function unsharded() {
  const full = weights();
  const [w1, b1, w2, b2] = [full.w1, full.b1, full.w2, full.b2].map(leaf) as [Tensor, Tensor, Tensor, Tensor];
  const x = leaf(input());
  const y = gelu(x.matmul(w1.transpose(0, 1)).add(b1)).matmul(w2.transpose(0, 1)).add(b2);
  y.mul(upstream()).sum().backward();
  return { y: y.detach(), x: x.grad!, w1: w1.grad!, b1: b1.grad!, w2: w2.grad!, b2: b2.grad! };
}

/** Your ParallelMLP on `n` ranks; every rank returns its output and gradients, and the launch its trace. */
async function parallel(n: number) {
  const result = await launch({
    worldSize: n,
    program: async (comm: Comm) => {
      const model = new ParallelMLP(comm, weights());
      const x = leaf(input());
      const y = await model.forward(x);
      // An empty message to itself marks where the forward's messages end in the trace.
      comm.isend(comm.rank, randn([0], { seed: 0 }), { tag: 999 });
      await comm.recv(comm.rank, { tag: 999 });
      await y.mul(upstream()).sum().backwardAsync();
      return { y: y.detach(), x: x.grad, w1: model.w1.grad, b1: model.b1.grad, w2: model.w2.grad, b2: model.b2.grad };
    },
    timeoutMs: 10_000,
  });
  for (const r of result.ranks) if (r.status !== 'ok') throw r.error ?? new Error(`rank ${r.rank}: ${r.status}`);
  return { values: result.ranks.map((r) => r.value as Record<string, Tensor | null>), trace: result.trace };
}

/** Elements sent, over all ranks, before and after each rank's marker. */
function traffic(trace: TraceEvent[], n: number): { forward: number; backward: number; tags: [number, number] } {
  const afterMarker = new Array<boolean>(n).fill(false);
  const sums = [0, 0];
  const tags = [new Set<number>(), new Set<number>()];
  for (const e of trace) {
    if (e.tag === 999) afterMarker[e.src] = true;
    else {
      const k = afterMarker[e.src] ? 1 : 0;
      sums[k]! += e.count;
      tags[k]!.add(e.tag);
    }
  }
  return { forward: sums[0]!, backward: sums[1]!, tags: [tags[0]!.size, tags[1]!.size] };
}

describe('ParallelMLP', () => {
  const ref = unsharded();
  for (const n of [1, 2, 4]) {
    it(`gives the unsharded output on ${n} rank(s)`, async () => {
      const { values } = await parallel(n);
      values.forEach((v, rank) => testing.assertClose(v['y']!, ref.y, { ...TOL, label: `rank ${rank}: y with ${n} ranks` }));
    });

    it(`gives each rank its shard of the weight gradients, and the bias gradients, on ${n} rank(s)`, async () => {
      const { values } = await parallel(n);
      values.forEach((v, rank) => {
        const { start, end } = chunkBounds(H, n)[rank]!;
        testing.assertClose(v['w1']!, ref.w1.slice(0, start, end), { ...TOL, label: `rank ${rank}: w1.grad (rows ${start}-${end - 1}) with ${n} ranks` });
        testing.assertClose(v['b1']!, ref.b1.slice(0, start, end), { ...TOL, label: `rank ${rank}: b1.grad with ${n} ranks` });
        testing.assertClose(v['w2']!, ref.w2.slice(1, start, end), { ...TOL, label: `rank ${rank}: w2.grad (columns ${start}-${end - 1}) with ${n} ranks` });
        testing.assertClose(v['b2']!, ref.b2, { ...TOL, label: `rank ${rank}: b2.grad with ${n} ranks` });
      });
    });

    it(`gives the layers before the MLP the whole input gradient on ${n} rank(s)`, async () => {
      const { values } = await parallel(n);
      values.forEach((v, rank) => {
        expect(v['x'], `rank ${rank}: x.grad is null: the backward never reached the input`).not.toBeNull();
        testing.assertClose(v['x']!, ref.x, { ...TOL, label: `rank ${rank}: x.grad with ${n} ranks` });
      });
    });
  }

  it('sends one all-reduce of y in forward and one of the input gradient in backward, on 4 ranks', async () => {
    const n = 4;
    const { trace } = await parallel(n);
    const t = traffic(trace, n);
    // A ring all-reduce of a tensor of k elements sends 2(N-1)·k elements over all ranks.
    expect({ calls: t.tags[0], elements: t.forward }, 'forward: one all-reduce of y [B, O]').toEqual({ calls: 1, elements: 2 * (n - 1) * B * O });
    expect({ calls: t.tags[1], elements: t.backward }, 'backward: one all-reduce of x.grad [B, D]').toEqual({ calls: 1, elements: 2 * (n - 1) * B * D });
  });
});
