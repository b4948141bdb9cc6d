/**
 * The rank program of the collectives view: a real collective of
 * @dtlab/collectives on a tapped Comm (tap.ts). It is a module of its own
 * so that it runs the same inline (called by the view's model) and on a Web
 * Worker per rank (loaded by URL): it returns everything the model reads,
 * the rank's result and its tap log, as data.
 *
 * Two kinds of input: 'values', the run the view shows (rank r's element e
 * is `inputValue(r, e)`), and 'positions', a run of the same algorithm in
 * which every rank's element e is e itself and reductions take the max, so
 * every value that travels is the index of the element it belongs to (the
 * max of equal numbers is that number). Which elements a message carries
 * does not depend on the op or the values: the two runs send the same
 * messages, which the model checks.
 */
import { allGather, allReduce, broadcast, chunkBounds, reduceScatter, type ReduceOp } from '@dtlab/collectives';
import { tensor, zeros, type Tensor } from '@dtlab/tensor';
import type { Comm } from '@dtlab/runtime';
import { tapComm, type TapEvent } from './tap.ts';

/** The collectives the view offers. */
export const COLLECTIVES = ['allReduce:ring', 'allReduce:tree', 'allReduce:naive', 'reduceScatter', 'allGather', 'broadcast'] as const;
export type CollectiveKind = (typeof COLLECTIVES)[number];

/** The reduce ops of @dtlab/collectives the view offers (for the collectives that reduce). */
export const REDUCE_OPS = ['sum', 'avg', 'prod', 'min', 'max'] as const;
export type ViewOp = (typeof REDUCE_OPS)[number];

/**
 * Rank r's input element e: a power of two from 1/4 to 4. Sums, products,
 * minima and maxima of up to 8 of them are exact in float32, in any order,
 * so every rank's result can be compared exactly with a reduction in one
 * process; the values differ across ranks and elements, so each op's
 * result is visibly its own.
 */
export const inputValue = (r: number, e: number): number => 2 ** (((3 * r + e) % 5) - 2);

/** What a rank of the view's run returns: its result (where it lies in the buffer) and its tap log. */
export interface RankRecord {
  from: number;
  values: number[];
  log: TapEvent[];
}

function input(rank: number, from: number, to: number, mode: 'values' | 'positions'): Tensor {
  return tensor(Array.from({ length: to - from }, (_, i) => (mode === 'positions' ? from + i : inputValue(rank, from + i))));
}

/** Runs `kind` with `op` on this rank's input (see the file comment); returns its result and tap log. */
export async function tappedCollective(comm: Comm, kind: CollectiveKind, elements: number, op: ViewOp, mode: 'values' | 'positions'): Promise<RankRecord> {
  const log: TapEvent[] = [];
  const c = tapComm(comm, log);
  const n = comm.worldSize;
  const bounds = chunkBounds(elements, n);
  const reduceOp: ReduceOp = mode === 'positions' ? 'max' : op;
  if (kind.startsWith('allReduce')) {
    const t = input(comm.rank, 0, elements, mode);
    await allReduce(c, t, { op: reduceOp, algorithm: kind.split(':')[1] as 'ring' | 'tree' | 'naive' });
    return { from: 0, values: t.toArray(), log };
  }
  if (kind === 'reduceScatter') {
    const out = await reduceScatter(c, input(comm.rank, 0, elements, mode), { op: reduceOp });
    return { from: bounds[comm.rank]!.start, values: out.toArray(), log };
  }
  if (kind === 'allGather') {
    const own = bounds[comm.rank]!;
    const out = await allGather(c, input(comm.rank, own.start, own.end, mode), { counts: bounds.map((b) => b.end - b.start) });
    return { from: 0, values: out.toArray(), log };
  }
  const t = comm.rank === 0 ? input(0, 0, elements, mode) : zeros([elements]);
  await broadcast(c, t, { src: 0 });
  return { from: 0, values: t.toArray(), log };
}
