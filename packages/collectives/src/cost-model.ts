/**
 * Closed-form times of the collectives under the runtime's alpha-beta cost
 * model: a message of b bytes costs alpha + b/B, and a rank's sends share its
 * one outgoing link. With S the buffer size in bytes, N ranks:
 *
 * | op            | algorithm | time                          |
 * |---------------|-----------|-------------------------------|
 * | allReduce     | ring      | 2(N-1)·(alpha + S/(N·B))      |
 * | allReduce     | tree      | 2·ceil(log2 N)·(alpha + S/B)  |
 * | allReduce     | naive     | alpha + (N-1)·S/B             |
 * | reduceScatter | ring      | (N-1)·(alpha + S/(N·B))       |
 * | allGather     | ring      | (N-1)·(alpha + S/(N·B))       |
 * | broadcast     | tree      | ceil(log2 N)·(alpha + S/B)    |
 * | reduce        | tree      | ceil(log2 N)·(alpha + S/B)    |
 * | gather        | direct    | alpha + S/(N·B)               |
 * | scatter       | direct    | alpha + (N-1)·S/(N·B)         |
 * | allToAll      | pairwise  | (N-1)·(alpha + S/(N·B))       |
 * | barrier       | -         | ceil(log2 N)·alpha            |
 *
 * For reduceScatter and allReduce S is each rank's input; for allGather and
 * gather, the gathered output; for scatter, the root's input; for allToAll,
 * each rank's input. The forms are exact when N divides S into equal chunks
 * (and, for trees, N is a power of two); otherwise they are upper bounds.
 *
 * Buffers split between elements, never inside one: when N does not divide
 * the element count, the largest chunk holds ceil(count/N) elements, up to
 * one element more than S/N, and the ring carries that chunk over every one
 * of its hops. So S/N in the table stands for that largest chunk,
 * ceil(S/(N·e))·e bytes with e the bytes per element (`elementBytes`).
 */
import type { CostModel } from '@dtlab/runtime';

/** Collective ops with a cost formula. */
export type CostedOp = 'allReduce' | 'reduceScatter' | 'allGather' | 'broadcast' | 'reduce' | 'gather' | 'scatter' | 'allToAll' | 'barrier';

/** The default algorithm of each op. */
export const DEFAULT_ALGORITHM: Record<CostedOp, string> = {
  allReduce: 'ring',
  reduceScatter: 'ring',
  allGather: 'ring',
  broadcast: 'tree',
  reduce: 'tree',
  gather: 'direct',
  scatter: 'direct',
  allToAll: 'pairwise',
  barrier: '-',
};

/** Options of `estimateTime`. */
export interface EstimateOptions {
  /**
   * Bytes per element (4 for float32, 8 for float64), the unit chunks are
   * rounded to. Default 1, which rounds chunks to whole bytes: still exact
   * when N divides the element count, but no longer an upper bound otherwise.
   */
  elementBytes?: number;
}

/** Estimated time in microseconds of `op` with `algorithm` on `bytes` bytes and `worldSize` ranks. */
export function estimateTime(op: CostedOp, algorithm: string | undefined, bytes: number, worldSize: number, cost: CostModel, opts: EstimateOptions = {}): number {
  const n = worldSize;
  const { alphaUs: a, bytesPerUs: bw } = cost;
  const e = opts.elementBytes ?? 1;
  const algo = algorithm ?? DEFAULT_ALGORITHM[op];
  if (!(n >= 1) || !Number.isInteger(n)) throw new RangeError(`estimateTime: worldSize must be a positive integer, got ${worldSize}`);
  if (!(bytes >= 0)) throw new RangeError(`estimateTime: bytes must be non-negative, got ${bytes}`);
  if (!(e > 0)) throw new RangeError(`estimateTime: elementBytes must be positive, got ${opts.elementBytes}`);
  if (n === 1) return 0;
  const chunk = Math.ceil(bytes / e / n) * e; // the largest chunk under the uneven-split rule, in whole elements
  const rounds = Math.ceil(Math.log2(n));
  const key = `${op}/${algo}`;
  switch (key) {
    case 'allReduce/ring': return 2 * (n - 1) * (a + chunk / bw);
    case 'allReduce/tree': return 2 * rounds * (a + bytes / bw);
    case 'allReduce/naive': return a + ((n - 1) * bytes) / bw;
    case 'reduceScatter/ring':
    case 'allGather/ring':
    case 'allToAll/pairwise': return (n - 1) * (a + chunk / bw);
    case 'broadcast/tree':
    case 'reduce/tree': return rounds * (a + bytes / bw);
    case 'gather/direct': return a + chunk / bw;
    case 'scatter/direct': return a + ((n - 1) * chunk) / bw;
    case 'barrier/-': return rounds * a;
    default: throw new RangeError(`estimateTime: no cost formula for ${op} with algorithm '${algo}'`);
  }
}
