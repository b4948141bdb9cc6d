/**
 * Public tests of exercise 4. They train a small MLP with your DataParallel
 * on several ranks in one thread (the inline backend, so breakpoints and
 * stack traces work): every rank builds its replica from a different seed and
 * trains on its own half (or third) of a fixed batch. The reference is one
 * process training rank 0's model on the whole batch with the same SGD.
 *
 *   pnpm test ex04        run them
 *   pnpm test:ui ex04     open them in the vitest UI
 */
import { describe, expect, it } from 'vitest';
import { launch, type Comm } from '@dtlab/runtime';
import { Generator, Tensor, deriveSeed, nn, optim, tensor, testing } from '@dtlab/tensor';
import { DataParallel } from '../src/data-parallel.ts';

const SIZES = [5, 12, 9, 3];
const PER_RANK = 4;
const STEPS = 3;
const LR = 0.5;

/** Rank r's replica, from its own seed: the ranks start from different models. */
const replica = (rank: number) => new nn.MLP(SIZES, { seed: deriveSeed(7, rank), activation: 'tanh' });

/** The whole batch of `n` parts of PER_RANK examples; rank r trains on part r. */
function batch(n: number): { x: number[][]; y: number[] } {
  const gen = new Generator(99);
  const x = Array.from({ length: n * PER_RANK }, () => Array.from({ length: SIZES[0]! }, () => gen.normal()));
  return { x, y: x.map(() => gen.int(SIZES.at(-1)!)) };
}
function part(n: number, rank: number): { x: Tensor; y: number[] } {
  const { x, y } = batch(n);
  const rows = [rank * PER_RANK, (rank + 1) * PER_RANK] as const;
  return { x: tensor(x.slice(...rows)), y: y.slice(...rows) };
}

const flat = (m: nn.Module) => m.parameters().flatMap((p) => p.toArray());

/** What every rank returns: its parameters after create and after each step, and its loss at each step. */
interface Run {
  initial: number[];
  params: number[][];
  losses: number[];
}

/** Trains on `n` ranks with your DataParallel. */
async function trainOnRanks(n: number): Promise<Run[]> {
  const result = await launch({
    worldSize: n,
    timeoutMs: 20_000,
    program: async (comm: Comm): Promise<Run> => {
      const model = replica(comm.rank);
      const sgd = new optim.SGD(model.parameters(), { lr: LR });
      const ddp = await DataParallel.create(comm, model);
      const run: Run = { initial: flat(model), params: [], losses: [] };
      const { x, y } = part(n, comm.rank);
      for (let s = 0; s < STEPS; s++) {
        sgd.zeroGrad();
        const loss = nn.crossEntropy(ddp.forward(x), y);
        loss.backward();
        await ddp.finishGradientSynchronization();
        sgd.step();
        run.losses.push(loss.item());
        run.params.push(flat(model));
      }
      return run;
    },
  });
  for (const r of result.ranks) if (r.status !== 'ok') throw r.error ?? new Error(`rank ${r.rank}: ${r.status}`);
  return result.ranks.map((r) => r.value as Run);
}

/** One process: rank 0's model, the whole batch of `n` parts, the same SGD. */
function singleProcess(n: number): number[][] {
  const model = replica(0);
  const sgd = new optim.SGD(model.parameters(), { lr: LR });
  const { x, y } = batch(n);
  const out: number[][] = [];
  for (let s = 0; s < STEPS; s++) {
    sgd.zeroGrad();
    nn.crossEntropy(model.forward(tensor(x)), y).backward();
    sgd.step();
    out.push(flat(model));
  }
  return out;
}

describe('DataParallel', () => {
  it('gives every rank rank 0\'s model when create resolves', async () => {
    const runs = await trainOnRanks(3);
    const want = flat(replica(0));
    runs.forEach((run, rank) => testing.assertClose(run.initial, want, { label: `rank ${rank}'s parameters after create, against rank 0's model`, rtol: 0, atol: 0 }));
  });

  it('trains on one rank exactly as one process does', async () => {
    const [run] = await trainOnRanks(1);
    singleProcess(1).forEach((want, s) => testing.assertClose(run!.params[s]!, want, { label: `parameters after step ${s + 1}`, rtol: 1e-5, atol: 1e-6 }));
  });

  it('lowers the loss on every rank (which alone proves nothing)', async () => {
    const runs = await trainOnRanks(2);
    runs.forEach((run, rank) => expect(run.losses.at(-1)!, `rank ${rank}'s loss at step ${STEPS} against step 1`).toBeLessThan(run.losses[0]!));
  });

  for (const n of [2, 3]) {
    it(`trains on ${n} ranks as one process on the whole batch does, step after step`, async () => {
      const runs = await trainOnRanks(n);
      const want = singleProcess(n);
      for (let s = 0; s < STEPS; s++) {
        runs.forEach((run, rank) => testing.assertClose(run.params[s]!, want[s]!, { label: `rank ${rank}'s parameters (all, end to end) after step ${s + 1} with ${n} ranks`, rtol: 1e-5, atol: 1e-6 }));
      }
    });
  }

  it('keeps every rank\'s parameters bit for bit the same', async () => {
    const runs = await trainOnRanks(3);
    const mine = runs[0]!.params.at(-1)!;
    runs.slice(1).forEach((run, k) => {
      const theirs = run.params.at(-1)!;
      const i = theirs.findIndex((v, j) => !Object.is(v, mine[j]));
      expect(i === -1 ? 'the same' : `element ${i}: ${theirs[i]} against rank 0's ${mine[i]}`, `rank ${k + 1}'s parameters after step ${STEPS}, against rank 0's`).toBe('the same');
    });
  });
});
