/**
 * `barrier`: no rank leaves until every rank has arrived.
 */
import type { Comm } from '@dtlab/runtime';
import { announce } from './call.ts';

/** Resolves once every rank has called `barrier`. */
export async function barrier(comm: Comm): Promise<void> {
  announce(comm, { op: 'barrier' });
  await comm.barrier();
}
