/**
 * Argument checks and the call announcement every collective makes first:
 * the fabric compares the i-th collective call of every rank and reports a
 * CollectiveMismatchError when ranks disagree, instead of a hang.
 */
import { Tensor } from '@dtlab/tensor';
import type { CollectiveCall, Comm } from '@dtlab/runtime';
import { COLLECTIVE_TAG } from './algorithms/common.ts';

/**
 * Announces `call` for this rank and returns the tag of its messages:
 * COLLECTIVE_TAG + i for the i-th collective call on `comm`, the same on
 * every rank, so that calls in flight together keep their messages apart.
 */
export function announce(comm: Comm, call: CollectiveCall): number {
  return COLLECTIVE_TAG + comm.announceCollective(call);
}

/** Throws unless `t` is a Tensor. */
export function checkTensor(op: string, comm: Comm, t: unknown, what = 'tensor'): Tensor {
  if (!(t instanceof Tensor)) throw new TypeError(`rank ${comm.rank}: ${op}: ${what} must be a Tensor, got ${t === null ? 'null' : typeof t}`);
  return t;
}

/** `root` if it is a rank, rank 0 if it was not given (undefined; null is not a rank); throws otherwise. */
export function checkRoot(op: string, comm: Comm, given: unknown, what: string): number {
  const root = given === undefined ? 0 : given;
  if (!Number.isInteger(root) || (root as number) < 0 || (root as number) >= comm.worldSize) {
    throw new RangeError(`rank ${comm.rank}: ${op}: ${what} must be a rank in [0, ${comm.worldSize}), got ${typeof root === 'string' ? `the string ${JSON.stringify(root)}` : String(root)}`);
  }
  return root as number;
}
