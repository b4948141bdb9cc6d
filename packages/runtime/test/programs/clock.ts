/**
 * Rank programs of the hidden clock's test (LaunchSpec.clockKey): what a
 * rank may do with the clock with and without the launch's key.
 */
import { zeros } from '@dtlab/tensor';
import { memory, type Comm } from '../../src/index.ts';

/** Reads comm.virtualTimeUs after a message: what a covert channel needs. */
export async function readsTheClock(comm: Comm): Promise<number> {
  if (comm.rank === 0) await comm.send(1, zeros([0]));
  else await comm.recv(0);
  return comm.virtualTimeUs;
}

/** Moves the clock with comm.elapse, without the key. */
export function elapses(comm: Comm): number {
  comm.elapse(5);
  return 0;
}

/** Barrier, then what the key allows: reading and moving the clock; and what a keyless mark says of when it was made. */
export async function withTheKey(comm: Comm, key: string): Promise<{ before: number; after: number; markUs: number | null }> {
  await comm.barrier();
  const before = comm.readClock(key);
  comm.elapse(7, 'modelled work', { key });
  const mark = await memory.mark('a keyless mark');
  return { before, after: comm.readClock(key), markUs: mark ? mark.vtUs : null };
}
