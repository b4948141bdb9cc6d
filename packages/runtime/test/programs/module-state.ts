/** A module-level counter that every rank increments once. */
import type { Comm } from '../../src/index.ts';

let counter = 0;

/** Increments the module's counter, waits for every rank to do so, and returns the counter. */
export async function bumpCounter(comm: Comm): Promise<number> {
  counter++;
  await comm.barrier();
  return counter;
}
