/**
 * Data-parallel training of a 784-256-10 MLP, profiled on the virtual
 * device: every rank trains on its own batch, and each parameter's gradient
 * is averaged over the ranks by a ring all-reduce started from a gradient
 * hook on a background stream, so the communication overlaps with the rest
 * of backward. Pass `after` to all-reduce only after backward instead, and
 * compare the exposed communication.
 *
 *   pnpm dtrun -n 4 --device course --profile packages/runtime/examples/train-profile.ts
 *   pnpm dtrun -n 4 --device course --profile packages/runtime/examples/train-profile.ts after
 */
import { chunkBounds, deriveSeed, nn, noGrad, optim, randn, type Tensor } from '@dtlab/tensor';
import { memory, profile, type Comm } from '@dtlab/runtime';

/** Sum of `t` over all ranks, in place, by a ring: reduce-scatter, then all-gather (2(N-1) steps). */
async function ringAllReduce(comm: Comm, t: Tensor, tag: number): Promise<void> {
  const n = comm.worldSize;
  if (n === 1) return;
  const flat = t.reshape([-1]);
  const chunk = chunkBounds(flat.numel, n).map(({ start, end }) => flat.slice(0, start, end));
  const next = (comm.rank + 1) % n;
  const prev = (comm.rank - 1 + n) % n;
  const at = (k: number) => chunk[((k % n) + n) % n]!;
  for (let s = 0; s < n - 1; s++) {
    const got = await comm.sendRecv(next, at(comm.rank - s), prev, { tag });
    noGrad(() => at(comm.rank - s - 1).add_(got));
  }
  for (let s = 0; s < n - 1; s++) {
    const got = await comm.sendRecv(next, at(comm.rank + 1 - s), prev, { tag });
    noGrad(() => at(comm.rank - s).copy_(got));
  }
}

export async function main(comm: Comm, mode = 'overlap'): Promise<void> {
  const model = new nn.MLP([784, 256, 10], { seed: 0 });
  const opt = new optim.AdamW(model.parameters(), { lr: 1e-3 });
  const x = randn([64, 784], { seed: deriveSeed(1, comm.rank) });
  const labels = Array.from({ length: 64 }, (_, i) => (i + comm.rank) % 10);
  const params = model.namedParameters();
  // Gradients become ready in reverse order of use; each starts its all-reduce then (mode 'overlap').
  params.forEach(([name, p], i) =>
    p.registerPostAccumulateGradHook(() => {
      if (mode === 'overlap') comm.background(() => ringAllReduce(comm, p.grad!, i), `all-reduce ${name}`);
    }),
  );
  for (let step = 0; step < 3; step++) {
    await profile.region('step', async () => {
      comm.elapse(100, 'load batch');
      opt.zeroGrad();
      const loss = profile.region('forward', () => nn.crossEntropy(model.forward(x), labels));
      profile.region('backward', () => loss.backward());
      await profile.region('gradients', async () => {
        if (mode !== 'overlap') for (const [i, [name, p]] of params.entries()) await comm.background(() => ringAllReduce(comm, p.grad!, i), `all-reduce ${name}`).wait();
        await comm.waitAll();
        noGrad(() => params.forEach(([, p]) => p.grad!.div_(comm.worldSize)));
      });
      profile.region('optimizer', () => opt.step());
      if (comm.rank === 0) console.log(`step ${step}: loss ${loss.item().toFixed(4)}`);
    });
    await memory.mark(`after step ${step + 1}`);
  }
}
