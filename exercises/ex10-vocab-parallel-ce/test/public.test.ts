/**
 * Public tests of exercise 10. They give each of 1, 2 and 4 ranks its
 * columns of the same logits, run your vocabParallelCrossEntropy in one
 * thread (the inline backend, so breakpoints and stack traces work), and
 * compare the loss and every rank's gradient with nn.crossEntropy on the
 * whole logits in one process.
 *
 *   pnpm test ex10        run them
 *   pnpm test:ui ex10     open them in the vitest UI
 */
import { describe, expect, it } from 'vitest';
import { launch, type Comm } from '@dtlab/runtime';
import { chunkBounds, nn, randn, testing, type Tensor } from '@dtlab/tensor';
import { vocabParallelCrossEntropy } from '../src/vocab-parallel-ce.ts';

const [B, V] = [6, 50];
/** Logits of a few units, as a model's; targets spread over the vocabulary. */
const logits = () => randn([B, V], { seed: 7 }).mul(3);
const targets = [0, 49, 13, 24, 25, 37];

/** The full cross-entropy and the gradient of the whole logits, in one process (float64). */
function full(): { loss: number; grad: Tensor } {
  const z = logits().to('float64');
  z.requiresGrad = true;
  const loss = nn.crossEntropy(z, targets);
  loss.backward();
  return { loss: loss.item(), grad: z.grad! };
}

/** Your loss on `n` ranks: every rank's loss and its columns' gradient. */
async function sharded(n: number): Promise<{ loss: number; grad: Tensor }[]> {
  const result = await launch({
    worldSize: n,
    program: async (comm: Comm) => {
      const { start, end } = chunkBounds(V, n)[comm.rank]!;
      const mine = logits().slice(1, start, end).contiguous();
      mine.requiresGrad = true;
      const loss = await vocabParallelCrossEntropy(comm, mine, targets, V);
      await loss.backwardAsync();
      return { loss: loss.item(), grad: mine.grad! };
    },
    timeoutMs: 10_000,
  });
  for (const r of result.ranks) if (r.status !== 'ok') throw r.error ?? new Error(`rank ${r.rank}: ${r.status}`);
  return result.ranks.map((r) => r.value as { loss: number; grad: Tensor });
}

describe('vocabParallelCrossEntropy', () => {
  const ref = full();
  for (const n of [1, 2, 4]) {
    it(`gives the full cross-entropy on ${n} rank(s)`, async () => {
      const got = await sharded(n);
      got.forEach(({ loss }, rank) => expect(loss, `rank ${rank}: the loss with ${n} ranks`).toBeCloseTo(ref.loss, 5));
    });

    it(`gives each of ${n} rank(s) its columns of the full gradient`, async () => {
      const got = await sharded(n);
      got.forEach(({ grad }, rank) => {
        const { start, end } = chunkBounds(V, n)[rank]!;
        testing.assertClose(grad, ref.grad.slice(1, start, end), { rtol: 1e-4, atol: 1e-7, label: `rank ${rank}: logits.grad (columns ${start}-${end - 1}) with ${n} ranks` });
      });
    });
  }
});
