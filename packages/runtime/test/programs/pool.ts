/** Rank programs for the worker-pool tests. */
import { tensor } from '@dtlab/tensor';
import type { Comm } from '../../src/index.ts';

let launchesSeen = 0;

/** Counts launches in this worker's module state; prints a line; returns the count. */
export async function count(comm: Comm): Promise<number> {
  launchesSeen++;
  console.log(`rank ${comm.rank} has seen ${launchesSeen} launch(es)`);
  return launchesSeen;
}

/** Returns at once, leaving a timer that sends on this launch's Comm later. */
export async function leaveTimer(comm: Comm): Promise<void> {
  setTimeout(() => {
    try {
      comm.isend((comm.rank + 1) % comm.worldSize, tensor([99]));
    } catch {
      // the launch is over; nothing to do
    }
  }, 50);
}

/** Exchanges one value with the next rank and returns what arrived. */
export async function exchange(comm: Comm): Promise<number> {
  const got = await comm.sendRecv((comm.rank + 1) % comm.worldSize, tensor([comm.rank]), (comm.rank - 1 + comm.worldSize) % comm.worldSize);
  return got.item();
}

/** Spins forever. */
export async function spin(comm: Comm): Promise<void> {
  let x = comm.rank;
  for (;;) x = (x * 7 + 1) % 1000003;
}
