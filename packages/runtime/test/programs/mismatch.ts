/** Rank 0 sends 100 float32 elements; rank 1 receives into a buffer of the wrong size or dtype. */
import { zeros, arange } from '@dtlab/tensor';
import type { Comm } from '../../src/index.ts';

export async function recvIntoWrongBuffer(comm: Comm, wrong: 'size' | 'dtype'): Promise<void> {
  if (comm.rank === 0) {
    await comm.send(1, arange(100), { tag: 4 });
    return;
  }
  const into = wrong === 'size' ? zeros([10]) : zeros([100], { dtype: 'float64' });
  await comm.recv(0, { tag: 4, into });
}
