/**
 * Public tests of exercise 14. They time the library's three all-reduces on
 * the runtime's virtual clock (the inline backend: every rank in this thread,
 * the network of the case), and compare your chooser's pick with the fastest
 * measured, and your crossover with the size where the ring measurably starts
 * to win.
 *
 *   pnpm test ex14        run them
 *   pnpm test:ui ex14     open them in the vitest UI
 */
import { describe, expect, it } from 'vitest';
import { allReduce } from '@dtlab/collectives';
import { launch } from '@dtlab/runtime';
import { zeros } from '@dtlab/tensor';
import { chooseAllReduce, ringCrossoverBytes, type AllReduceAlgorithm, type Network } from '../src/collective-by-size.ts';

const ALGORITHMS: AllReduceAlgorithm[] = ['ring', 'tree', 'naive'];
const DEFAULT_NETWORK: Network = { alphaUs: 10, bytesPerUs: 1250 };

/** Virtual µs of one all-reduce of `bytes` (float32) on `worldSize` ranks: the slowest rank's clock. */
async function measureUs(algorithm: AllReduceAlgorithm, worldSize: number, bytes: number, network: Network): Promise<number> {
  const result = await launch({ worldSize, cost: network, program: async (comm) => void (await allReduce(comm, zeros([bytes / 4]), { algorithm })) });
  expect(result.ok, `${algorithm} on ${worldSize} ranks`).toBe(true);
  return Math.max(...result.stats.map((s) => s.vtUs));
}

async function measureAll(worldSize: number, bytes: number, network: Network): Promise<Record<AllReduceAlgorithm, number>> {
  const us = {} as Record<AllReduceAlgorithm, number>;
  for (const a of ALGORITHMS) us[a] = await measureUs(a, worldSize, bytes, network);
  return us;
}

describe('chooseAllReduce', () => {
  for (const worldSize of [4, 8]) {
    for (const bytes of [256, 4096, 16384, 2 ** 20]) {
      it(`picks an all-reduce within 5% of the fastest for ${bytes} B on ${worldSize} ranks`, async () => {
        const us = await measureAll(worldSize, bytes, DEFAULT_NETWORK);
        const chosen = chooseAllReduce(bytes, worldSize, { ...DEFAULT_NETWORK });
        const fastest = Math.min(...ALGORITHMS.map((a) => us[a]));
        const table = ALGORITHMS.map((a) => `${a} ${us[a].toFixed(1)} µs`).join(', ');
        expect(us[chosen], `chose ${chosen}; measured ${table}`).toBeLessThanOrEqual(fastest * 1.05);
      });
    }
  }
});

describe('ringCrossoverBytes', () => {
  for (const worldSize of [4, 8]) {
    it(`is where the ring becomes the fastest on ${worldSize} ranks (default network)`, async () => {
      const predicted = ringCrossoverBytes(worldSize, { ...DEFAULT_NETWORK });
      // On this network the ring wins long before 16 MiB (and a buffer that size is slow to simulate).
      expect(predicted, 'a crossover of at least one element').toBeGreaterThan(4);
      expect(predicted, 'a crossover below 16 MiB').toBeLessThan(2 ** 24);
      // Measure on both sides of the prediction: just below it the ring must lose, just above it win.
      const below = Math.max(4, Math.floor((predicted * 0.95) / 4) * 4);
      const above = Math.ceil((predicted * 1.05) / 4) * 4 + 4;
      const lose = await measureAll(worldSize, below, DEFAULT_NETWORK);
      const win = await measureAll(worldSize, above, DEFAULT_NETWORK);
      expect(lose.ring, `at ${below} B the ring should not be the fastest yet: ${JSON.stringify(lose)}`).toBeGreaterThan(Math.min(lose.tree, lose.naive));
      expect(win.ring, `at ${above} B the ring should be the fastest: ${JSON.stringify(win)}`).toBeLessThanOrEqual(Math.min(win.tree, win.naive));
    });
  }
});
