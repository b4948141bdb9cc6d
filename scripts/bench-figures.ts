/**
 * The figures a benchmark hands to `pnpm bench all`: one row each (what was
 * measured, dtlab's figure, the peer measured in the same run, their ratio
 * and the target, met or not). A benchmark run by hand prints its own tables
 * and hands nothing; run by `pnpm bench all`, which names a file in
 * DTLAB_BENCH_FIGURES, it also appends its rows there, one JSON object a
 * line, for scripts/bench.ts to gather into one table.
 */
import { appendFileSync } from 'node:fs';

/** The environment variable naming the file that `pnpm bench all` gathers rows from. */
export const FIGURES_ENV = 'DTLAB_BENCH_FIGURES';

/** One figure of one benchmark, as the summary table shows it. */
export interface BenchFigure {
  /** The benchmark's name, as `pnpm bench <name>` takes it. */
  bench: string;
  /** What was measured, for example `matmul 256x256x256 f32`. */
  figure: string;
  /** The unit of `dtlab` and `peer`, for example `GFLOP/s`. */
  unit: string;
  dtlab: number;
  /** The peer measured in the same run, or null when it could not run (say, no torch). */
  peer: number | null;
  /** What the peer is (`torch 1.13, 1 thread`, `the checks with no isolation`). */
  peerName: string;
  /**
   * dtlab against the peer, the way the benchmark compares them (a rate's
   * ratio dtlab/peer, a time's as the benchmark states it); null without a peer.
   */
  ratio: number | null;
  /**
   * The target and its bound: on the ratio when it ends in `x` (`>= 1.0x`),
   * else on dtlab's figure in its unit (`<= 100 µs`, `>= 80 gradings/min`); `-` for none.
   */
  target: string;
  /** Whether the target was met; null when there is no target or nothing to judge it by. */
  met: boolean | null;
}

/** Whether `value` meets `bound` in the direction given (`>=` or `<=`); null without a value. */
export function meets(value: number | null | undefined, op: '>=' | '<=', bound: number): boolean | null {
  if (value === null || value === undefined || !Number.isFinite(value)) return null;
  return op === '>=' ? value >= bound : value <= bound;
}

/** Appends `rows` to the file `pnpm bench all` named, if it named one; otherwise does nothing. */
export function reportFigures(rows: BenchFigure[]): void {
  const file = process.env[FIGURES_ENV];
  if (!file) return;
  appendFileSync(file, rows.map((r) => `${JSON.stringify(r)}\n`).join(''));
}
