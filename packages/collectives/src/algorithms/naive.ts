/**
 * The naive all-reduce: every rank sends its whole buffer to every other
 * rank, then combines all N buffers in rank order. Simple, and the same
 * bitwise result everywhere, but each rank sends (N-1)·S bytes where the
 * ring sends 2(N-1)/N·S.
 */
import type { TypedArray } from '@dtlab/tensor';
import type { Comm } from '@dtlab/runtime';
import { combineInto, type ReduceOp } from '../reduce-op.ts';
import { mod, sendData } from './common.ts';

/** All-reduce by all-to-all exchange of full buffers. */
export async function naiveAllReduce(comm: Comm, data: TypedArray, op: ReduceOp, tag: number): Promise<void> {
  const { rank: r, worldSize: n } = comm;
  if (n === 1) return;
  // Post every receive first; rank r-d sends to us as its d-th message.
  const works = Array.from({ length: n - 1 }, (_, i) => comm.irecv(mod(r - i - 1, n), { tag }));
  for (let d = 1; d < n; d++) sendData(comm, mod(r + d, n), data, tag);
  const parts: TypedArray[] = new Array(n);
  parts[r] = data.slice();
  for (let i = 0; i < n - 1; i++) parts[mod(r - i - 1, n)] = (await works[i]!.wait()).data();
  const acc = parts[0]!;
  for (let src = 1; src < n; src++) combineInto(op, acc, parts[src]!, true);
  data.set(acc);
}
