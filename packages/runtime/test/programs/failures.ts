/** Rank programs in which a rank fails, so its peers see RankFailedError. */
import { tensor } from '@dtlab/tensor';
import type { Comm } from '../../src/index.ts';

/**
 * A chain 0 <- 1 <- 2: the last rank throws, the middle rank's recv from it
 * fails (and it does not catch), so rank 0's recv from the middle rank fails too.
 */
export async function chainFromLastRank(comm: Comm): Promise<number> {
  const last = comm.worldSize - 1;
  if (comm.rank === last) throw new Error(`boom on rank ${comm.rank}`);
  const got = await comm.recv(comm.rank + 1);
  return got.item();
}

/**
 * The same chain, but rank 0 catches its failed recv from rank 1 and then
 * sends to rank 1: the send fails at once, naming the root rank.
 */
export async function sendAfterPeerFailed(comm: Comm): Promise<string> {
  if (comm.rank === 2) throw new Error('boom on rank 2');
  if (comm.rank === 1) await comm.recv(2);
  await comm.recv(1).catch(() => undefined);
  await comm.send(1, tensor([1]));
  return 'sent to a failed rank';
}
