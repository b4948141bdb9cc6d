/**
 * Public tests of exercise 11. They cut a small model (four linear layers
 * with tanh between them) into one stage per rank, run your gpipeStep in
 * one thread (the inline backend, so breakpoints and stack traces work),
 * and compare every stage's gradients with one process running the whole
 * model on the whole batch. Then they time a step on the virtual device and
 * compare its bubble with (p-1)/(m+p-1).
 *
 *   pnpm test ex11        run them
 *   pnpm test:ui ex11     open them in the vitest UI
 */
import { describe, expect, it } from 'vitest';
import { launch, profile, type Comm } from '@dtlab/runtime';
import { chunkBounds, nn, randn, testing, type Tensor } from '@dtlab/tensor';
import { gpipeStep } from '../src/gpipe.ts';

const WIDTHS = [6, 8, 8, 8, 5];
const B = 12;
const targets = Array.from({ length: B }, (_, i) => (i * 7) % 5);
const inputs = () => randn([B, 6], { seed: 3, dtype: 'float64' });

/** Layers `from` to `to` of the model, with tanh after every layer but the model's last. */
class Layers extends nn.Module {
  readonly layers: nn.Linear[] = [];
  private readonly lastOfModel: boolean;
  constructor(from: number, to: number, widths = WIDTHS) {
    super();
    const dtype = widths === WIDTHS ? 'float64' : 'float32';
    for (let i = from; i < to; i++) this.layers.push(new nn.Linear(widths[i]!, widths[i + 1]!, { seed: 10 + i, dtype }));
    this.lastOfModel = to === widths.length - 1;
  }
  forward(x: Tensor): Tensor {
    let h = x;
    this.layers.forEach((l, k) => {
      h = l.forward(h);
      if (!(this.lastOfModel && k === this.layers.length - 1)) h = h.tanh();
    });
    return h;
  }
}

/** The gradients of every parameter of the whole model, on the whole batch, in one process. */
function singleProcess(): number[][] {
  const model = new Layers(0, 4);
  const loss = nn.crossEntropy(model.forward(inputs()), targets);
  loss.backward();
  return model.parameters().map((p) => p.grad!.toArray());
}

/** Your pipeline on `p` stages with `m` micro-batches: every stage's gradients. */
async function pipeline(p: number, m: number): Promise<number[][][]> {
  const result = await launch({
    worldSize: p,
    program: async (comm: Comm) => {
      const { start, end } = chunkBounds(4, p)[comm.rank]!;
      const stage = new Layers(start, end);
      const batch = { ...(comm.rank === 0 ? { inputs: inputs() } : {}), ...(comm.rank === p - 1 ? { targets } : {}) };
      await gpipeStep(comm, stage, batch, m);
      return stage.parameters().map((q) => q.grad!.toArray());
    },
    timeoutMs: 10_000,
  });
  for (const r of result.ranks) if (r.status !== 'ok') throw r.error ?? new Error(`rank ${r.rank}: ${r.status}`);
  return result.ranks.map((r) => r.value as number[][]);
}

/**
 * A device of 1 GFLOP/s: slow enough that a micro-batch of 8 rows × 256
 * computes for about 6.3 ms per stage, against 17 µs for its activations on
 * the wire, as in real pipelines, where a message is small next to a stage's
 * compute.
 */
const SLOW_DEVICE = { name: 'slow', flops: 1e9, memoryBytes: 64 * 2 ** 20, memoryBandwidth: 64e9 };

describe('gpipeStep', () => {
  const ref = singleProcess();
  for (const [p, m] of [[1, 1], [2, 1], [2, 4], [4, 4], [4, 3]] as const) {
    it(`gives every stage the whole batch's gradients, with ${p} stage(s) and ${m} micro-batch(es)`, async () => {
      const got = await pipeline(p, m);
      got.forEach((grads, stage) => {
        const { start } = chunkBounds(4, p)[stage]!;
        grads.forEach((g, k) => testing.assertClose(g, ref[2 * start + k]!, { rtol: 1e-9, atol: 1e-12, label: `stage ${stage}, parameter ${k} (${k % 2 === 0 ? 'weight' : 'bias'} of layer ${start + Math.floor(k / 2)}) with p = ${p}, m = ${m}` }));
      });
    });
  }

  it('leaves a bubble of (p-1)/(m+p-1) of the step on the virtual clock, with 4 stages and 8 micro-batches', async () => {
    const [p, m] = [4, 8];
    const wide = Array.from({ length: 2 * p + 1 }, () => 256);
    const result = await launch({
      worldSize: p,
      device: SLOW_DEVICE,
      program: async (comm: Comm) => {
        const stage = new Layers(2 * comm.rank, 2 * comm.rank + 2, wide);
        const x = randn([8 * m, 256], { seed: 5 });
        x.requiresGrad = true; // so that stage 0's backward does the same work as the others'
        const batch = { ...(comm.rank === 0 ? { inputs: x } : {}), ...(comm.rank === p - 1 ? { targets: Array.from({ length: 8 * m }, (_, i) => i % 256) } : {}) };
        await comm.barrier();
        await profile.region('step', () => gpipeStep(comm, stage, batch, m));
      },
      timeoutMs: 30_000,
    });
    for (const r of result.ranks) if (r.status !== 'ok') throw r.error ?? new Error(`rank ${r.rank}: ${r.status}`);
    const regions = result.device!.ranks.map((d) => d.regions.find((r) => r.label === 'step')!);
    const step = Math.max(...regions.map((r) => r.totalUs));
    const bubble = regions.reduce((s, r) => s + (1 - r.computeUs / step), 0) / p;
    expect(bubble, `bubble of the step: ${bubble.toFixed(3)}`).toBeCloseTo((p - 1) / (m + p - 1), 1);
  }, 60_000);
});
