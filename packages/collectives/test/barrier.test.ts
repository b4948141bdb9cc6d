/**
 * barrier(comm): no rank leaves before every rank has arrived, and all
 * ranks leave at the same virtual time.
 */
import { expect, it } from 'vitest';
import { DEFAULT_COST } from '@dtlab/runtime';
import { tensor } from '@dtlab/tensor';
import { barrier } from '../src/index.ts';
import { runRanks, virtualTime } from './support/ranks.ts';

it.each([1, 2, 5, 8])('with %i ranks that arrive at different times, every arrival comes before any departure', async (n) => {
  const events: string[] = [];
  await runRanks(n, async (comm) => {
    // Ranks arrive after different numbers of real timer ticks, not in rank order.
    for (let k = 0; k < (comm.rank * 3) % n; k++) await new Promise((resolve) => setTimeout(resolve, 1));
    events.push(`arrive ${comm.rank}`);
    await barrier(comm);
    events.push(`leave ${comm.rank}`);
  });
  const lastArrival = Math.max(...events.map((e, i) => (e.startsWith('arrive') ? i : -1)));
  const firstDeparture = events.findIndex((e) => e.startsWith('leave'));
  expect(events).toHaveLength(2 * n);
  expect(lastArrival).toBeLessThan(firstDeparture);
});

it('lines up the virtual clocks: a rank late by a delayed message holds the others back', async () => {
  const n = 4;
  const { result } = await runRanks(
    n,
    async (comm) => {
      // Rank 3 first receives a message that the fabric delays by 500 virtual µs.
      if (comm.rank === 2) await comm.send(3, tensor([1]));
      if (comm.rank === 3) await comm.recv(2);
      await barrier(comm);
      return comm.virtualTimeUs;
    },
    { faults: [{ kind: 'delay', src: 2, dst: 3, us: 500 }] },
  );
  const late = 500 + DEFAULT_COST.alphaUs + 4 / DEFAULT_COST.bytesPerUs;
  const leave = late + Math.ceil(Math.log2(n)) * DEFAULT_COST.alphaUs;
  for (const s of result.stats) expect(s.vtUs).toBeCloseTo(leave, 9);
  expect(virtualTime(result)).toBeCloseTo(leave, 9);
});
