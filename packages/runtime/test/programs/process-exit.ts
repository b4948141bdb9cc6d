/** Rank 1 calls process.exit in the middle of the run; rank 0 waits for its message. */
import type { Comm } from '../../src/index.ts';

export async function exitOnRank1(comm: Comm): Promise<string> {
  if (comm.rank === 1) process.exit(3);
  await comm.recv(1);
  return 'unreachable';
}
