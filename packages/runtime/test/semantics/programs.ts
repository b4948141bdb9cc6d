/**
 * Rank programs of the thread-per-rank semantics suite (suite.ts). They
 * import only the tensor library and the runtime's types, so the same file
 * runs in a Node worker thread (loaded by path) and in a browser's Web
 * Worker (imported by URL from the page's server).
 */
import { randn, tensor, type Tensor } from '@dtlab/tensor';
import type { Comm } from '../../src/index.ts';

/**
 * Rank 0 sends rank 1 eight messages alternating tags 0 and 1 (values 0..7);
 * rank 1 takes all of tag 1 first, then tag 0. Messages of one (source, tag)
 * keep their order; different tags are independent.
 */
export async function tagOrder(comm: Comm): Promise<number[]> {
  if (comm.rank === 0) {
    for (let i = 0; i < 8; i++) await comm.send(1, tensor([i, i * 10]), { tag: i % 2 });
    return [];
  }
  const got: number[] = [];
  for (const tag of [1, 0]) for (let i = 0; i < 4; i++) got.push((await comm.recv(0, { tag })).toArray()[0]!);
  return got;
}

/**
 * A ring all-reduce (reduce-scatter then all-gather) of a vector of 4·N
 * elements, with a matmul of compute on each rank first: values, messages of
 * two sizes, and compute and communication on the virtual clock.
 */
export async function ringWithCompute(comm: Comm, w: Tensor): Promise<number[]> {
  const { rank, worldSize: n } = comm;
  const x = randn([4 * n, 4 * n], { seed: 11 + rank }).matmul(w).sum(1);
  // Kept in float32 throughout, as the messages carry it, so every rank ends with the same bits.
  const data = x.toArray().map(Math.fround);
  const chunk = 4;
  const next = (rank + 1) % n;
  const prev = (rank + n - 1) % n;
  const slice = (c: number) => tensor(data.slice(c * chunk, (c + 1) * chunk));
  for (let s = 0; s < n - 1; s++) {
    const send = (rank - s + n) % n;
    const recv = (rank - s - 1 + n) % n;
    const got = (await comm.sendRecv(next, slice(send), prev)).toArray();
    for (let i = 0; i < chunk; i++) data[recv * chunk + i] = Math.fround(data[recv * chunk + i]! + got[i]!);
  }
  for (let s = 0; s < n - 1; s++) {
    const send = (rank - s + 1 + n) % n;
    const recv = (rank - s + n) % n;
    const got = (await comm.sendRecv(next, slice(send), prev)).toArray();
    for (let i = 0; i < chunk; i++) data[recv * chunk + i] = got[i]!;
  }
  await comm.barrier();
  return data;
}

/** The error rank 2 throws: a class of the program's own with a field. */
export class StageError extends Error {
  override name = 'StageError';
  constructor(readonly stage: number) {
    super(`stage ${stage} has no weights`);
  }
}

/** Each rank sends to rank 0; rank 2 throws after its send; rank 0 waits for every rank, then for rank 2 again. */
export async function oneRankThrows(comm: Comm): Promise<number> {
  if (comm.rank !== 0) {
    await comm.send(0, tensor([comm.rank]));
    if (comm.rank === 2) throw new StageError(comm.rank);
    return comm.rank;
  }
  let total = 0;
  for (let r = 1; r < comm.worldSize; r++) total += (await comm.recv(r)).toArray()[0]!;
  await comm.recv(2, { tag: 5 }); // rank 2 never sends this: it threw
  return total;
}

/** Every rank receives from its left neighbour before it sends to its right: a cycle the fabric reports. */
export async function ringDeadlock(comm: Comm): Promise<void> {
  const n = comm.worldSize;
  const got = await comm.recv((comm.rank + n - 1) % n, { tag: 3 });
  await comm.send((comm.rank + 1) % n, got, { tag: 3 });
}

/** Rank 1 sends once, then loops forever without awaiting; rank 0 receives that, then waits for a second message. */
export async function infiniteLoop(comm: Comm): Promise<number> {
  if (comm.rank === 1) {
    await comm.send(0, tensor([1]));
    let i = 0;
    for (;;) i = (i + 1) | 0;
  }
  if (comm.rank === 0) {
    await comm.recv(1);
    await comm.recv(1);
  }
  return comm.rank;
}

/** Rank 1 rejects a promise nobody handles, then waits; rank 0 waits for rank 1. */
export async function unhandledRejection(comm: Comm): Promise<number> {
  if (comm.rank === 1) {
    void Promise.reject(new StageError(1));
    await comm.recv(0);
  } else await comm.recv(1);
  return comm.rank;
}
