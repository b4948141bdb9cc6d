/**
 * Public tests of exercise 8. They wrap every Linear of a small MLP in your
 * FsdpLinear on several ranks in one thread (the inline backend, so
 * breakpoints and stack traces work), train with AdamW over the shards,
 * every rank on its own mini-batches, and compare each rank's shards and
 * their gradients with the same elements of single-process optim.AdamW on
 * the combined batch. The last test runs on the virtual device and measures
 * what each layer's forward leaves alive.
 *
 *   pnpm test ex08        run them
 *   pnpm test:ui ex08     open them in the vitest UI
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { launch, memory, type Comm, type LaunchResult } from '@dtlab/runtime';
import { Generator, Tensor, cat, chunkBounds, deriveSeed, nn, optim, tensor, testing } from '@dtlab/tensor';
import { FsdpLinear } from '../src/fsdp-linear.ts';

/** Six layers, none more than a quarter of the model. */
const SIZES = [9, 30, 31, 29, 32, 30, 7];
/** eps is large next to these gradients on purpose, so that a mean and a sum of gradients give different steps. */
const OPTS = { lr: 0.01, betas: [0.9, 0.99] as [number, number], eps: 1e-3, weightDecay: 0.1 };
const BATCH = 3;

const makeModel = () => new nn.MLP(SIZES, { seed: 5, activation: 'tanh' });
const linears = (m: nn.MLP) => m.layers.filter((l): l is nn.Linear => l instanceof nn.Linear);
/** A layer's flat parameters (or gradients): W row by row, then b. */
const flatOf = (l: nn.Linear, grad: boolean) => cat([(grad ? l.weight.grad! : l.weight).reshape([l.weight.numel]), grad ? l.bias!.grad! : l.bias!]);

/** Rank `rank`'s mini-batch at step `step`. */
function batch(rank: number, step: number): { x: Tensor; y: number[] } {
  const gen = new Generator(deriveSeed(13, rank, step));
  return { x: tensor(Array.from({ length: BATCH }, () => Array.from({ length: SIZES[0]! }, () => gen.normal()))), y: Array.from({ length: BATCH }, () => gen.int(SIZES.at(-1)!)) };
}

/** Single-process AdamW on the combined batch of `n` ranks: per step, each layer's flat gradient and flat parameters after the step. */
function reference(n: number, steps: number): { grads: number[][]; params: number[][] }[] {
  const model = makeModel();
  const adamw = new optim.AdamW(model.parameters(), OPTS);
  const out: { grads: number[][]; params: number[][] }[] = [];
  for (let s = 0; s < steps; s++) {
    const bs = Array.from({ length: n }, (_, r) => batch(r, s));
    model.zeroGrad();
    nn.crossEntropy(model.forward(Tensor.cat(bs.map((b) => b.x))), bs.flatMap((b) => b.y)).backward();
    const grads = linears(model).map((l) => flatOf(l, true).toArray());
    adamw.step();
    out.push({ grads, params: linears(model).map((l) => flatOf(l, false).toArray()) });
  }
  return out;
}

/** The layers, sharded; a function of its own so that the full model is garbage once it returns. */
function shardModel(comm: Comm): FsdpLinear[] {
  return linears(makeModel()).map((l) => new FsdpLinear(comm, l));
}

/**
 * One training step of one rank; returns its shards' gradients. With `key`,
 * memory marks before the forward and after each layer's forward.
 */
async function trainStep(comm: Comm, layers: FsdpLinear[], opt: optim.AdamW, s: number, key?: string): Promise<number[][]> {
  for (const l of layers) l.shard.grad = null;
  if (key) await memory.mark('before forward', { key });
  const { x, y } = batch(comm.rank, s);
  let h = x;
  for (const [k, layer] of layers.entries()) {
    h = await layer.forward(h);
    if (k + 1 < layers.length) h = h.tanh();
    if (key) await memory.mark(`after layer ${k}`, { key });
  }
  await nn.crossEntropy(h, y).backwardAsync();
  const grads = layers.map((l) => l.shard.grad?.toArray() ?? []);
  opt.step();
  return grads;
}

/** Trains on `n` ranks; every rank returns, per step, its shards' gradients and its shards after the step. */
async function train(n: number, steps: number, key?: string): Promise<{ out: { grads: number[][]; params: number[][] }[][]; result: LaunchResult }> {
  const result = await launch({
    worldSize: n,
    program: async (comm: Comm) => {
      const layers = shardModel(comm);
      const opt = new optim.AdamW(layers.map((l) => l.shard), OPTS);
      const out: { grads: number[][]; params: number[][] }[] = [];
      for (let s = 0; s < steps; s++) {
        const grads = await trainStep(comm, layers, opt, s, key && s === steps - 1 ? key : undefined);
        out.push({ grads, params: layers.map((l) => l.shard.toArray()) });
      }
      return out;
    },
    timeoutMs: 60_000,
    ...(key ? { device: 'course' as const, markKey: key } : {}),
  });
  for (const r of result.ranks) if (r.status !== 'ok') throw r.error ?? new Error(`rank ${r.rank}: ${r.status}`);
  return { out: result.ranks.map((r) => r.value as { grads: number[][]; params: number[][] }[]), result };
}

/** Rank `rank`'s chunk of a layer's flat values. */
const chunkOf = (flat: number[], n: number, rank: number) => flat.slice(chunkBounds(flat.length, n)[rank]!.start, chunkBounds(flat.length, n)[rank]!.end);

describe('FsdpLinear: values', () => {
  for (const [n, steps] of [[1, 2], [2, 2], [3, 3]] as const) {
    it(`gives every shard the gradient and the steps of single-process AdamW on the combined batch, with ${n} rank(s)`, async () => {
      const { out } = await train(n, steps);
      const want = reference(n, steps);
      out.forEach((perStep, rank) =>
        perStep.forEach(({ grads, params }, s) =>
          linears(makeModel()).forEach((_, k) => {
            const layer = 2 * k;
            testing.assertClose(grads[k]!, chunkOf(want[s]!.grads[k]!, n, rank), { label: `rank ${rank}: the gradient of layer ${layer}'s shard in step ${s + 1} with ${n} ranks`, rtol: 1e-4, atol: 1e-5 });
            testing.assertClose(params[k]!, chunkOf(want[s]!.params[k]!, n, rank), { label: `rank ${rank}: layer ${layer}'s shard after step ${s + 1} with ${n} ranks`, rtol: 1e-4, atol: 1e-5 });
          }),
        ),
      );
    }, 30_000);
  }
});

describe('FsdpLinear: parameter memory', () => {
  it('leaves no gathered layer alive after its forward (beyond a layer or so), with 4 ranks', async () => {
    const n = 4;
    const key = randomUUID();
    const { result } = await train(n, 2, key);
    const sizes = SIZES.slice(0, -1).map((inF, i) => ({ inF, outF: SIZES[i + 1]!, n: SIZES[i + 1]! * inF + SIZES[i + 1]! }));
    const largest = Math.max(...sizes.map((s) => s.n));
    const total = sizes.reduce((a, s) => a + s.n, 0);
    // The grader's bound (see the README): one gathered layer, the chunk the collectives keep for reuse, 4 KiB.
    const bound = 4 * (largest + Math.ceil(largest / n)) + 4096;
    for (const d of result.device!.ranks) {
      const marks = d.memory.marks.filter((m) => m.trusted);
      const start = marks[0]!.inUseBytes;
      let activations = 0;
      const held = sizes.map((s, k) => {
        // What layer k's forward may leave alive: its input, a copy, its output and the tanh's.
        activations += 4 * BATCH * (s.inF + 2 * s.outF);
        return marks[k + 1]!.inUseBytes - start - activations;
      });
      console.log(`rank ${d.rank}: bytes held after each layer's forward, beyond the shards and the activations: ${held.join(', ')}; bound ${bound}; one layer is at most ${4 * largest} bytes, the whole model ${4 * total}`);
      held.forEach((h, k) => expect(h, `rank ${d.rank}: bytes held after the forward of layer ${2 * k}`).toBeLessThanOrEqual(bound));
    }
  }, 120_000);
});
