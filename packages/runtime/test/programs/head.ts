/** Rank 0 sends 0..9 to rank 1, which answers with one value, 7: what traceHead keeps of each message. */
import { arange, full } from '@dtlab/tensor';
import type { Comm } from '../../src/index.ts';

export async function sendRange(comm: Comm): Promise<void> {
  if (comm.rank === 0) {
    await comm.send(1, arange(10));
    await comm.recv(1);
  } else {
    await comm.recv(0);
    await comm.send(0, full([1], 7));
  }
}
