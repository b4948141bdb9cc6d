/**
 * Public tests of exercise 7. They train a small deep MLP with your
 * Zero2AdamW on several ranks in one thread (the inline backend, so
 * breakpoints and stack traces work), every rank on its own mini-batches,
 * and compare every rank's parameters with single-process optim.AdamW on
 * the combined batch. The last test runs on the virtual device and measures
 * what the gradients take while backward runs.
 *
 *   pnpm test ex07        run them
 *   pnpm test:ui ex07     open them in the vitest UI
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { launch, memory, type Comm, type LaunchResult } from '@dtlab/runtime';
import { allGather } from '@dtlab/collectives';
import { Generator, Tensor, chunkBounds, deriveSeed, flattenTensors, nn, optim, tensor, testing, zeros } from '@dtlab/tensor';
import { Zero2AdamW } from '../src/zero2-adamw.ts';

/** Twenty-four layers of width 16: the full gradient is about twenty times a layer's. */
const SIZES = [8, ...Array.from({ length: 23 }, () => 16), 5];
/** eps is large next to these gradients on purpose, so that a mean and a sum of gradients give different steps. */
const OPTS = { lr: 0.01, betas: [0.9, 0.99] as [number, number], eps: 1e-3, weightDecay: 0.1 };
const BUCKET_BYTES = 1024;
const BATCH = 3;

const makeModel = () => new nn.MLP(SIZES, { seed: 3, activation: 'tanh' });

/** Rank `rank`'s mini-batch at step `step`. */
function batch(rank: number, step: number): { x: Tensor; y: number[] } {
  const gen = new Generator(deriveSeed(11, rank, step));
  return { x: tensor(Array.from({ length: BATCH }, () => Array.from({ length: SIZES[0]! }, () => gen.normal()))), y: Array.from({ length: BATCH }, () => gen.int(SIZES.at(-1)!)) };
}

/** Single-process AdamW on the combined batch of `n` ranks: the flat parameters after each step. */
function reference(n: number, steps: number): number[][] {
  const model = makeModel();
  const adamw = new optim.AdamW(model.parameters(), OPTS);
  const after: number[][] = [];
  for (let s = 0; s < steps; s++) {
    const bs = Array.from({ length: n }, (_, r) => batch(r, s));
    model.zeroGrad();
    nn.crossEntropy(model.forward(Tensor.cat(bs.map((b) => b.x))), bs.flatMap((b) => b.y)).backward();
    adamw.step();
    after.push(flattenTensors(model.parameters()).toArray());
  }
  return after;
}

/** Marks of the memory test: before the optimizer exists, before the measured step's forward and backward, after each layer's weight gradient, after the backward. */
interface Measured {
  key: string;
  step: number;
}

/**
 * One training step of one rank. With `key`, memory marks before the
 * forward, before the backward, after each layer's weight gradient (a hook
 * registered after the optimizer's, so it runs after them) and after the
 * backward. A function of its own, so that nothing of the step (its loss,
 * and through it the activations) stays alive after it.
 */
async function trainStep(comm: Comm, model: nn.MLP, optimizer: Zero2AdamW, s: number, key?: string): Promise<void> {
  const params = model.parameters();
  model.zeroGrad();
  if (key) await memory.mark('before forward', { key });
  const { x, y } = batch(comm.rank, s);
  const loss = nn.crossEntropy(model.forward(x), y);
  if (key) await memory.mark('before backward', { key });
  const removers = key ? params.filter((p) => p.ndim === 2).map((p) => p.registerPostAccumulateGradHook(() => memory.mark('in backward', { key }).then(() => undefined))) : [];
  await loss.backwardAsync();
  if (key) await memory.mark('after backward', { key });
  removers.forEach((remove) => remove());
  await optimizer.step();
}

/** Trains on `n` ranks; every rank returns its flat parameters after each step (none when measuring). */
async function train(n: number, steps: number, measure?: Measured): Promise<{ params: number[][][]; result: LaunchResult }> {
  const result = await launch({
    worldSize: n,
    program: async (comm: Comm) => {
      const model = makeModel();
      if (measure) {
        // The ring collectives keep the last chunk they received for their next call: one all-gather
        // here puts that chunk into the baseline, so that what the optimizer keeps is measured without it.
        const counts = chunkBounds(model.numParameters(), n).map((b) => b.end - b.start);
        await allGather(comm, zeros([counts[comm.rank]!]), { counts });
        await memory.mark('before the optimizer', { key: measure.key });
      }
      const optimizer = new Zero2AdamW(comm, model.parameters(), { ...OPTS, bucketBytes: BUCKET_BYTES });
      const after: number[][] = [];
      for (let s = 0; s < steps; s++) {
        await trainStep(comm, model, optimizer, s, measure?.step === s ? measure.key : undefined);
        if (!measure) after.push(flattenTensors(model.parameters()).toArray());
      }
      return after;
    },
    timeoutMs: 60_000,
    ...(measure ? { device: 'course' as const, markKey: measure.key } : {}),
  });
  for (const r of result.ranks) if (r.status !== 'ok') throw r.error ?? new Error(`rank ${r.rank}: ${r.status}`);
  return { params: result.ranks.map((r) => r.value as number[][]), result };
}

describe('Zero2AdamW: values', () => {
  for (const [n, steps] of [[1, 2], [2, 2], [3, 3]] as const) {
    it(`takes the same ${steps} steps as single-process AdamW on the combined batch, with ${n} rank(s)`, async () => {
      const { params } = await train(n, steps);
      const want = reference(n, steps);
      params.forEach((perStep, rank) => perStep.forEach((got, s) => testing.assertClose(got, want[s]!, { label: `rank ${rank}'s flat parameters after step ${s + 1} with ${n} ranks`, rtol: 1e-4, atol: 1e-5 })));
    }, 30_000);
  }
});

describe('Zero2AdamW: gradient memory', () => {
  it('never holds much more than its gradient shard and a bucket or two during backward, with 4 ranks', async () => {
    const n = 4;
    const key = randomUUID();
    const { result } = await train(n, 2, { key, step: 1 });
    const model = makeModel();
    const p = model.numParameters();
    const l = Math.max(...model.parameters().map((t) => t.numel));
    const bucket = BUCKET_BYTES / 4 + l;
    // The grader's bound (see the README): a shard of the mean gradient, two buckets, the gradient in hand and its copy, 4 KiB.
    const bound = 4 * (Math.ceil(p / n) + 2 * bucket + 2 * l) + 4096;
    for (const d of result.device!.ranks) {
      const marks = d.memory.marks.filter((m) => m.trusted);
      const [base, beforeForward, beforeBackward] = marks;
      const { start, end } = chunkBounds(p, n)[d.rank]!;
      const between = beforeForward!.inUseBytes - base!.inUseBytes - 2 * 4 * (end - start);
      const during = marks.slice(3).map((m) => m.inUseBytes - beforeBackward!.inUseBytes);
      const held = Math.max(...during);
      const at = during.indexOf(held);
      const where = at === during.length - 1 ? 'at the end of backward' : `after the weight gradient of layer ${at + 1} of ${SIZES.length - 1}, counting from the output`;
      console.log(`rank ${d.rank}: gradients held during backward: ${between + held} bytes (${between} kept between steps beside the moments, ${held} more ${where}); bound ${bound}; the full gradient is ${4 * p} bytes`);
      expect(between + held, `rank ${d.rank}: bytes of gradients held during backward (P = ${p}, the full gradient is ${4 * p} bytes)`).toBeLessThanOrEqual(bound);
    }
  }, 120_000);
});

