/**
 * The rank side of the collectives benchmark: runs on every rank (a worker
 * thread), times the collective at each size, and checks one result against
 * values known in advance.
 *
 * Inputs are small integers that depend on rank and index, so every
 * reduction is exact in float32 and the expected value is computed here
 * without running any collective.
 */
import { Tensor, allocate, type DType, type TypedArray } from '@dtlab/tensor';
import type { Comm } from '@dtlab/runtime';
import { allGather, allReduce, broadcast, chunkBounds, reduceScatter } from '../src/index.ts';
import type { BenchOp } from './flags.ts';

/** What every rank is asked to do (the launch's one argument). */
export interface RankSpec {
  op: BenchOp;
  redop: 'sum' | 'avg' | 'prod' | 'min' | 'max';
  algorithm: 'ring' | 'naive' | 'tree';
  dtype: DType;
  check: boolean;
  /** One entry per row: element count of the full buffer, untimed and timed iterations. */
  rows: { count: number; warmup: number; iters: number }[];
  /** Untimed calls at the first row's size before any row, so that V8 has compiled the message path (see JIT_WARMUP_CALLS). */
  jitWarmup: number;
}

/** One rank's measurement of one row. */
export interface RankRow {
  count: number;
  /** Mean wall time of one call, in microseconds, on this rank. */
  timeUs: number;
  /** Elements of this rank's result that differ from the expected value (-1: not checked). */
  wrong: number;
}

/** Rank `r`'s input at index `i`: a small integer, so that sums, products, mins and maxes are exact. */
export function input(redop: RankSpec['redop'], r: number, i: number): number {
  return redop === 'prod' ? 1 + ((i + r) % 2) : (i * 13 + r * 7) % 101;
}

/** The reduction over `n` ranks of index `i`'s inputs, as a float32 or float64 collective computes it. */
export function expected(redop: RankSpec['redop'], n: number, i: number, dtype: DType): number {
  let acc = input(redop, 0, i);
  for (let r = 1; r < n; r++) {
    const v = input(redop, r, i);
    if (redop === 'prod') acc *= v;
    else if (redop === 'min') acc = Math.min(acc, v);
    else if (redop === 'max') acc = Math.max(acc, v);
    else acc += v;
  }
  const out = redop === 'avg' ? acc / n : acc;
  return dtype === 'float32' ? Math.fround(out) : out;
}

/** A buffer of `count` elements filled with rank `r`'s inputs. */
function inputs(spec: RankSpec, r: number, count: number, offset = 0): TypedArray {
  const data = allocate(spec.dtype, count);
  for (let i = 0; i < count; i++) data[i] = input(spec.redop, r, offset + i);
  return data;
}

function countWrong(actual: TypedArray, want: (i: number) => number): number {
  let wrong = 0;
  for (let i = 0; i < actual.length; i++) if (actual[i] !== want(i)) wrong++;
  return wrong;
}

/**
 * One row's operation for this rank: `run` calls the collective once,
 * `wrong` counts the elements of the last result that differ from what they
 * should be, assuming `run` was called once on fresh inputs.
 */
function setUp(comm: Comm, spec: RankSpec, count: number): { run: () => Promise<unknown>; wrong: () => number } {
  const { rank: r, worldSize: n } = comm;
  const { dtype, redop } = spec;
  switch (spec.op) {
    case 'allReduce': {
      const t = Tensor._fromData(inputs(spec, r, count), [count]);
      return {
        run: () => allReduce(comm, t, { op: redop, algorithm: spec.algorithm }),
        wrong: () => countWrong(t.data(), (i) => expected(redop, n, i, dtype)),
      };
    }
    case 'reduceScatter': {
      const t = Tensor._fromData(inputs(spec, r, count), [count]);
      const { start } = chunkBounds(count, n)[r]!;
      let out: Tensor | undefined;
      return {
        run: async () => (out = await reduceScatter(comm, t, { op: redop })),
        wrong: () => countWrong(out!.data(), (i) => expected(redop, n, start + i, dtype)),
      };
    }
    case 'allGather': {
      // count is the gathered output; each rank contributes count/n elements.
      const per = Math.floor(count / n);
      const t = Tensor._fromData(inputs(spec, r, per, r * per), [per]);
      let out: Tensor | undefined;
      return {
        run: async () => (out = await allGather(comm, t)),
        wrong: () => countWrong(out!.data(), (i) => input(redop, Math.floor(i / per), i)),
      };
    }
    case 'broadcast': {
      const t = Tensor._fromData(inputs(spec, r, count), [count]);
      return {
        run: () => broadcast(comm, t, { src: 0 }),
        wrong: () => countWrong(t.data(), (i) => input(redop, 0, i)),
      };
    }
  }
}

/**
 * The rank program: for each row, check one call on fresh inputs (if
 * asked), warm up, then time `iters` calls between a barrier and the last
 * call's return. Later calls reduce already-reduced data; only the time counts.
 */
export async function benchRank(comm: Comm, spec: RankSpec): Promise<RankRow[]> {
  const out: RankRow[] = [];
  if (spec.rows.length > 0 && spec.jitWarmup > 0) {
    const { run } = setUp(comm, spec, spec.rows[0]!.count);
    for (let i = 0; i < spec.jitWarmup; i++) await run();
  }
  for (const row of spec.rows) {
    const { run, wrong } = setUp(comm, spec, row.count);
    let bad = -1;
    if (spec.check) {
      await run();
      bad = wrong();
    }
    for (let i = 0; i < row.warmup; i++) await run();
    await comm.barrier();
    const t0 = performance.now();
    for (let i = 0; i < row.iters; i++) await run();
    const timeUs = ((performance.now() - t0) * 1000) / row.iters;
    out.push({ count: row.count, timeUs, wrong: bad });
  }
  return out;
}
