/** Rank programs that ask the fabric to hold too much (fabric-limits.test.ts). */
import { zeros } from '@dtlab/tensor';
import type { Comm } from '../../src/index.ts';

/** Rank 0 posts `n` receives from rank 1 and never waits on them; rank 1 sends nothing. */
export async function postsReceives(comm: Comm, n: number): Promise<number> {
  if (comm.rank === 0) for (let i = 0; i < n; i++) comm.irecv(1, { tag: i });
  return n;
}

/** Rank 0 sends `n` empty messages to rank 1, which never receives them. */
export async function sendsUnread(comm: Comm, n: number): Promise<number> {
  if (comm.rank === 0) for (let i = 0; i < n; i++) comm.isend(1, zeros([0]));
  return n;
}

/** Rank 0 sends `n` messages of `numel` floats to rank 1, which never receives them. */
export async function sendsUnreadBytes(comm: Comm, n: number, numel: number): Promise<number> {
  if (comm.rank === 0) for (let i = 0; i < n; i++) comm.isend(1, zeros([numel]));
  return n;
}

/** Rank 0 posts and waits for `n` receives one at a time, each matched by rank 1's send: under every bound. */
export async function manyInTurn(comm: Comm, n: number): Promise<number> {
  for (let i = 0; i < n; i++) {
    if (comm.rank === 0) await comm.recv(1, { tag: 1 });
    else await comm.send(0, zeros([1]), { tag: 1 });
  }
  return n;
}
