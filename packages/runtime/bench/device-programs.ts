/** The rank program of bench/device.bench.ts: data-parallel training with memory marks. */
import { deriveSeed, nn, optim, randn } from '@dtlab/tensor';
import { memory, type Comm } from '../src/index.ts';

/** `steps` steps of a 784-256-10 MLP at batch 64 per rank, gradients averaged by a hand-written ring pass, AdamW, a mark after each step. */
export async function train(comm: Comm, steps: number): Promise<number> {
  const model = new nn.MLP([784, 256, 10], { seed: 1 });
  const opt = new optim.AdamW(model.parameters(), { lr: 1e-3 });
  const x = randn([64, 784], { seed: deriveSeed(2, comm.rank) });
  const labels = Array.from({ length: 64 }, (_, i) => (i * 7 + comm.rank) % 10);
  let last = 0;
  for (let step = 0; step < steps; step++) {
    opt.zeroGrad();
    const loss = nn.crossEntropy(model.forward(x), labels);
    loss.backward();
    last = loss.item();
    for (const p of model.parameters()) {
      let acc = p.grad!.clone();
      let passing = p.grad!;
      for (let k = 1; k < comm.worldSize; k++) {
        passing = await comm.sendRecv((comm.rank + 1) % comm.worldSize, passing, (comm.rank - 1 + comm.worldSize) % comm.worldSize);
        acc = acc.add(passing);
      }
      p.grad = acc.div(comm.worldSize);
    }
    opt.step();
    await memory.mark(`after step ${step + 1}`);
  }
  return last;
}
