/** Rank programs of test/concurrent.test.ts for the workers backend. */
import type { Comm } from '@dtlab/runtime';
import { tensor } from '@dtlab/tensor';
import { allReduce, broadcast } from '../../src/index.ts';

const input = (r: number, k: number, len: number) => tensor(Array.from({ length: len }, (_, i) => (r + 1) * 100 + k * 10 + (i % 7)));

/** A broadcast from the last rank and a ring allReduce, started together and awaited together. */
export async function broadcastWithAllReduce(comm: Comm): Promise<{ a: number[]; b: number[] }> {
  const a = input(comm.rank, 0, 10);
  const b = input(comm.rank, 1, 40);
  await Promise.all([broadcast(comm, a, { src: comm.worldSize - 1 }), allReduce(comm, b)]);
  return { a: a.toArray(), b: b.toArray() };
}
