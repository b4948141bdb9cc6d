/** A dtrun program in which rank 1 prints a line, then throws. */
import type { Comm } from '../../src/index.ts';

export async function main(comm: Comm): Promise<void> {
  console.log(`hello from rank ${comm.rank}`);
  if (comm.rank === 1) throw new Error('rank 1 gives up');
  await comm.barrier();
}
