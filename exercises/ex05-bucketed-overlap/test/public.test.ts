/**
 * Public tests of exercise 5. They train MLPs with your BucketedDataParallel
 * on several ranks in one thread (the inline backend, so breakpoints work):
 * first the values against one process on the whole batch, then, on the
 * virtual device, when each bucket's all-reduce ends against when backward
 * ends.
 *
 *   pnpm test ex05        run them
 *   pnpm test:ui ex05     open them in the vitest UI
 */
import { describe, expect, it } from 'vitest';
import { COLLECTIVE_TAG, estimateTime } from '@dtlab/collectives';
import { launch, profile, type Comm, type LaunchResult } from '@dtlab/runtime';
import { Generator, Tensor, deriveSeed, nn, optim, tensor, testing } from '@dtlab/tensor';
import { BucketedDataParallel } from '../src/bucketed-data-parallel.ts';

/** A run: the model's layer sizes, examples per rank, bucket size, steps. */
interface Setup {
  sizes: number[];
  perRank: number;
  bucketBytes: number;
  steps: number;
}

const replica = (s: Setup, rank: number) => new nn.MLP(s.sizes, { seed: deriveSeed(5, rank), activation: 'tanh' });

/** Rank r's part of step t's batch. */
function part(s: Setup, step: number, rank: number): { x: Tensor; y: number[] } {
  const gen = new Generator(deriveSeed(17, step, rank));
  const x = Array.from({ length: s.perRank }, () => Array.from({ length: s.sizes[0]! }, () => gen.normal()));
  return { x: tensor(x), y: x.map(() => gen.int(s.sizes.at(-1)!)) };
}

const flat = (m: nn.Module) => m.parameters().flatMap((p) => p.toArray());

/** Trains on `n` ranks; every rank's parameters after each step, and the launch. */
async function trainOnRanks(s: Setup, n: number, device = false): Promise<{ params: number[][][]; result: LaunchResult }> {
  const result = await launch({
    worldSize: n,
    timeoutMs: 60_000,
    ...(device ? { device: 'course' as const, timeline: true } : {}),
    program: async (comm: Comm) => {
      const model = replica(s, comm.rank);
      const sgd = new optim.SGD(model.parameters(), { lr: 0.1 });
      const ddp = await BucketedDataParallel.create(comm, model, { bucketBytes: s.bucketBytes });
      const params: number[][] = [];
      for (let t = 0; t < s.steps; t++) {
        const { x, y } = part(s, t, comm.rank);
        sgd.zeroGrad();
        await comm.barrier(); // start the step together (the broadcast leaves rank 0 ahead)
        const loss = nn.crossEntropy(ddp.forward(x), y);
        profile.region('backward', () => loss.backward());
        await profile.region('wait for the all-reduces', () => ddp.finishGradientSynchronization());
        sgd.step();
        params.push(flat(model));
      }
      return params;
    },
  });
  for (const r of result.ranks) if (r.status !== 'ok') throw r.error ?? new Error(`rank ${r.rank}: ${r.status}`);
  return { params: result.ranks.map((r) => r.value as number[][]), result };
}

/** One process: rank 0's model on every step's whole batch. */
function singleProcess(s: Setup, n: number): number[][] {
  const model = replica(s, 0);
  const sgd = new optim.SGD(model.parameters(), { lr: 0.1 });
  const out: number[][] = [];
  for (let t = 0; t < s.steps; t++) {
    const parts = Array.from({ length: n }, (_, r) => part(s, t, r));
    sgd.zeroGrad();
    nn.crossEntropy(model.forward(Tensor.cat(parts.map((p) => p.x))), parts.flatMap((p) => p.y)).backward();
    sgd.step();
    out.push(flat(model));
  }
  return out;
}

/** Five layers of 16·16 + 16 parameters: 1088 bytes of gradient each. */
const SMALL: Setup = { sizes: [16, 16, 16, 16, 16, 16], perRank: 4, bucketBytes: 2 * 1088, steps: 3 };
/** Eight layers of 128·128 + 128, one bucket each: each layer's backward computes longer than its all-reduce takes. */
const DEEP: Setup = { sizes: Array.from({ length: 9 }, () => 128), perRank: 32, bucketBytes: (128 * 128 + 128) * 4, steps: 1 };

describe('BucketedDataParallel', () => {
  for (const n of [2, 3]) {
    it(`trains on ${n} ranks as one process on the whole batch does`, async () => {
      const { params } = await trainOnRanks(SMALL, n);
      const want = singleProcess(SMALL, n);
      params.forEach((steps, rank) => steps.forEach((p, t) => testing.assertClose(p, want[t]!, { label: `rank ${rank}'s parameters after step ${t + 1}`, rtol: 1e-5, atol: 1e-6 })));
    });
  }

  it('makes one all-reduce per bucket: 3 for five layers in buckets of two', async () => {
    const { result } = await trainOnRanks({ ...SMALL, steps: 1 }, 2);
    const calls = new Set(result.trace.filter((e) => e.tag >= COLLECTIVE_TAG && e.count > 0).map((e) => e.tag));
    // The broadcast of the 10 tensors makes 10 calls; the step's all-reduces follow.
    expect(calls.size - 10, 'collective calls of the step').toBe(3);
  });

  it('finishes the first bucket\'s all-reduce while backward is still running', async () => {
    const { result } = await trainOnRanks(DEEP, 2, true);
    const d = result.device!.ranks[0]!;
    const backwardEnd = d.timeline!.regions.find((r) => r.label === 'backward')!.endUs;
    const ends = d.streams.filter((s) => s.id !== 0).map((s) => `${s.label}: done at ${s.endUs.toFixed(0)} µs`);
    const first = Math.min(...d.streams.filter((s) => s.id !== 0).map((s) => s.endUs));
    expect(first, `backward ended at ${backwardEnd.toFixed(0)} µs; the all-reduces: ${ends.join(', ')}`).toBeLessThan(backwardEnd);
  });

  it('waits after backward for little more than the last bucket\'s all-reduce', async () => {
    const { result } = await trainOnRanks(DEEP, 2, true);
    const d = result.device!.ranks[0]!;
    const waited = d.regions.find((r) => r.label === 'wait for the all-reduces')!;
    const oneBucket = estimateTime('allReduce', 'ring', DEEP.bucketBytes, 2, { alphaUs: 10, bytesPerUs: 1250 }, { elementBytes: 4 });
    // All eight all-reduces take about 8 × 53 µs on the wire; the last bucket's alone, 73 µs.
    expect(waited.totalUs, `waited ${waited.totalUs.toFixed(0)} µs after backward; one bucket's all-reduce takes ${oneBucket.toFixed(0)} µs`).toBeLessThan(2 * oneBucket);
  });
});
