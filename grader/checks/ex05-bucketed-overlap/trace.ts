/**
 * Reading a step's all-reduces from the fabric's trace, which student code
 * cannot forge. Each rank sends itself a fence before every step (see
 * programs.ts), so the messages a rank sent between fence s and fence s+1
 * belong to step s. The collectives tag the messages of a rank's i-th
 * collective call COLLECTIVE_TAG + i, so the tags of a step, in increasing
 * order, are its collective calls in the order they were launched; and a ring
 * all-reduce of n elements on N ranks sends 2(N-1)·n elements in all (each
 * of the N chunks goes round N-1 links twice: reduce-scatter, all-gather).
 */
import { COLLECTIVE_TAG } from '@dtlab/collectives';
import type { TraceEvent } from '@dtlab/runtime';
import { FENCE_TAG } from './programs.ts';

/** One collective call of a step, as the trace shows it. */
export interface TracedCall {
  /** Its index among the launch's collective calls (the same on every rank). */
  index: number;
  /** Elements all ranks sent with its tag. */
  sent: number;
  /** Ranks that sent nothing with its tag. */
  silent: number[];
}

/** The collective calls of each step, in launch order (tags other than the collectives' are left out). */
export function callsPerStep(trace: TraceEvent[], worldSize: number, steps: number): TracedCall[][] {
  const perStep = Array.from({ length: steps }, () => new Map<number, { sent: number; ranks: Set<number> }>());
  for (let rank = 0; rank < worldSize; rank++) {
    let step = -1;
    for (const e of trace) {
      if (e.src !== rank) continue;
      if (e.dst === rank && e.tag === FENCE_TAG + step + 1 && step + 1 < steps) {
        step++;
        continue;
      }
      if (step < 0 || e.tag < COLLECTIVE_TAG) continue;
      const calls = perStep[step]!;
      const call = calls.get(e.tag) ?? { sent: 0, ranks: new Set<number>() };
      call.sent += e.count;
      call.ranks.add(rank);
      calls.set(e.tag, call);
    }
  }
  return perStep.map((calls) =>
    [...calls.entries()]
      .sort(([a], [b]) => a - b)
      .map(([tag, c]) => ({ index: tag - COLLECTIVE_TAG, sent: c.sent, silent: Array.from({ length: worldSize }, (_, r) => r).filter((r) => !c.ranks.has(r)) })),
  );
}
