/**
 * DDP's overlap of communication with backward, on the virtual device: one
 * gradient bucket per layer, all-reduced on a background stream started
 * from gradient hooks as soon as the bucket's gradients are complete,
 * against the same all-reduces started after backward. Both must give the
 * gradients of one process averaging every rank's; the overlapped one must
 * leave less communication exposed on the main stream.
 */
import { describe, expect, it } from 'vitest';
import { deriveSeed, flattenTensors, nn, noGrad, randn, testing, unflattenTensors, type Tensor } from '@dtlab/tensor';
import type { Comm } from '@dtlab/runtime';
import { allReduce } from '../src/index.ts';
import { runRanks } from './support/ranks.ts';

const WIDTH = 64;
const BATCH = 64;
const LAYERS = 4;

const model = () => new nn.MLP(Array.from({ length: LAYERS + 1 }, () => WIDTH), { seed: 7 });
const batch = (rank: number) => ({ x: randn([BATCH, WIDTH], { seed: deriveSeed(1, rank) }), y: randn([BATCH, WIDTH], { seed: deriveSeed(2, rank) }) });

/** Averages a bucket's gradients over the ranks: flatten, all-reduce, copy back. */
async function reduceBucket(comm: Comm, params: Tensor[]): Promise<void> {
  const flat = flattenTensors(params.map((p) => p.grad!));
  await allReduce(comm, flat, { op: 'avg' });
  const parts = unflattenTensors(flat, params.map((p) => p.shape));
  noGrad(() => params.forEach((p, i) => p.grad!.copy_(parts[i]!)));
}

/** One data-parallel step; 'overlap' starts each layer's all-reduce from hooks on a background stream, 'after' runs them one by one once backward is done. */
async function step(comm: Comm, mode: 'overlap' | 'after'): Promise<{ grads: Tensor[] }> {
  const m = model();
  const layers = m.layers.filter((l): l is nn.Linear => l instanceof nn.Linear);
  const buckets = layers.map((l) => [l.weight, l.bias!]);
  if (mode === 'overlap') {
    for (const bucket of buckets) {
      let ready = 0;
      for (const p of bucket) {
        p.registerPostAccumulateGradHook(() => {
          if (++ready === bucket.length) comm.background(() => reduceBucket(comm, bucket), 'bucket all-reduce');
        });
      }
    }
  }
  const { x, y } = batch(comm.rank);
  nn.mseLoss(m.forward(x), y).backward();
  // Backward finishes the last layer's gradients first: start from there, as the hooks would.
  if (mode === 'after') for (const bucket of [...buckets].reverse()) await reduceBucket(comm, bucket);
  await comm.waitAll();
  return { grads: m.parameters().map((p) => p.grad!) };
}

/** The gradient every rank must end with: the mean over ranks of each rank's own. */
function reference(worldSize: number): Tensor[] {
  const per = Array.from({ length: worldSize }, (_, rank) => {
    const m = model();
    const { x, y } = batch(rank);
    nn.mseLoss(m.forward(x), y).backward();
    return m.parameters().map((p) => p.grad!);
  });
  return per[0]!.map((_, i) => per.map((g) => g[i]!).reduce((a, b) => a.add(b)).div(worldSize));
}

describe('gradient all-reduces started from hooks during backward', () => {
  it('give the averaged gradients and hide communication behind the rest of backward, on 4 ranks', async () => {
    const n = 4;
    const overlap = await runRanks(n, (comm) => step(comm, 'overlap'), { device: 'course' });
    const after = await runRanks(n, (comm) => step(comm, 'after'), { device: 'course' });
    const want = reference(n);
    for (const run of [overlap, after]) {
      for (const [rank, v] of run.values.entries()) {
        v.grads.forEach((g, i) => testing.assertClose(g, want[i]!, { rtol: 1e-5, atol: 1e-6, label: `rank ${rank}: gradient ${i}` }));
      }
    }
    const exposed = (r: typeof overlap) => r.result.device!.ranks.map((d) => d.exposedCommUs);
    const [hidden, late] = [exposed(overlap), exposed(after)];
    // The same messages either way; only when they are sent differs.
    expect(overlap.result.trace.length).toBe(after.result.trace.length);
    expect(overlap.result.device!.ranks.map((d) => d.computeUs)).toEqual(after.result.device!.ranks.map((d) => d.computeUs));
    for (let r = 0; r < n; r++) {
      expect(late[r]!, `rank ${r}: all-reduces after backward leave their communication exposed`).toBeGreaterThan(0);
      expect(hidden[r]!, `rank ${r}: overlapped (${hidden[r]} µs exposed) vs after backward (${late[r]} µs)`).toBeLessThan(late[r]! / 2);
    }
    // And the step is shorter by what was hidden.
    const vt = (r: typeof overlap) => Math.max(...r.result.device!.ranks.map((d) => d.vtUs));
    expect(vt(overlap)).toBeLessThan(vt(after));
  });
});
