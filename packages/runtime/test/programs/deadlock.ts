/** Rank programs that deadlock in the three ways the fabric reports. */
import { tensor } from '@dtlab/tensor';
import type { Comm } from '../../src/index.ts';

/** Every rank receives from its left neighbour before sending to its right: a cycle. */
export async function recvBeforeSend(comm: Comm): Promise<void> {
  const next = (comm.rank + 1) % comm.worldSize;
  const prev = (comm.rank - 1 + comm.worldSize) % comm.worldSize;
  const got = await comm.recv(prev, { tag: 3 });
  await comm.send(next, got, { tag: 3 });
}

/** Rank 0 waits for a message (tag 7) that rank 1 never sends: rank 1 just returns. */
export async function waitsOnFinishedRank(comm: Comm): Promise<string> {
  if (comm.rank === 0) await comm.recv(1, { tag: 7 });
  return 'returned';
}

/** Every rank but the last enters a barrier; the last returns without it. */
export async function barrierMissingRank(comm: Comm): Promise<string> {
  if (comm.rank === comm.worldSize - 1) return 'skipped the barrier';
  await comm.barrier();
  return 'passed the barrier';
}

/** Sends first, then receives: the correct order, no deadlock (a control case). */
export async function sendBeforeRecv(comm: Comm): Promise<number> {
  const next = (comm.rank + 1) % comm.worldSize;
  const prev = (comm.rank - 1 + comm.worldSize) % comm.worldSize;
  await comm.send(next, tensor([comm.rank]));
  return (await comm.recv(prev)).item();
}
