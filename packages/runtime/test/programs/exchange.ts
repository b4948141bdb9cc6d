/** Small exchanges used by several tests: ping-pong, fan-out, a mixed program. */
import { tensor, arange, full } from '@dtlab/tensor';
import type { Comm } from '../../src/index.ts';

/** Ranks 0 and 1 bounce a 4-element tensor `rounds` times; returns the final value and virtual time. */
export async function pingPong(comm: Comm, rounds: number): Promise<{ value: number[]; vtUs: number }> {
  let t = tensor([0, 0, 0, 0]);
  for (let i = 0; i < rounds; i++) {
    if (comm.rank === 0) {
      await comm.send(1, t);
      t = await comm.recv(1);
    } else if (comm.rank === 1) {
      t = (await comm.recv(0)).add(1);
      await comm.send(0, t);
    }
  }
  return { value: t.toArray(), vtUs: comm.virtualTimeUs };
}

/** Rank 0 sends 100 float32 elements to every other rank; each receives its message. */
export async function fanOut(comm: Comm): Promise<number> {
  if (comm.rank === 0) {
    for (let r = 1; r < comm.worldSize; r++) await comm.send(r, full([100], r));
    return 0;
  }
  return (await comm.recv(0)).sum().item();
}

/**
 * A small program touching every Comm operation: a ring step with sendRecv,
 * a gather to rank 0 with isend/irecv, a barrier, and a broadcast from rank 0.
 */
export async function mixed(comm: Comm): Promise<{ fromPrev: number[]; total: number[]; vtUs: number }> {
  const n = comm.worldSize;
  const mine = arange(comm.rank + 2).mul(comm.rank + 1);
  const fromPrev = await comm.sendRecv((comm.rank + 1) % n, mine, (comm.rank - 1 + n) % n, { tag: 1 });
  let total = tensor([0]);
  if (comm.rank === 0) {
    const works = Array.from({ length: n - 1 }, (_, i) => comm.irecv(i + 1, { tag: 2 }));
    for (const w of works) total = total.add((await w.wait()).sum());
  } else {
    await comm.isend(0, mine, { tag: 2 }).wait();
  }
  await comm.barrier();
  if (comm.rank === 0) for (let r = 1; r < n; r++) await comm.send(r, total, { tag: 3 });
  else total = await comm.recv(0, { tag: 3 });
  return { fromPrev: fromPrev.toArray(), total: total.toArray(), vtUs: comm.virtualTimeUs };
}
