/**
 * Deadlock detection. A launch is deadlocked when every running rank waits
 * (for a message or a barrier) and nothing can wake any of them: no message
 * in flight, and, for worker ranks, each rank has said it is idle (a rank
 * busy computing may still send). The fabric re-arms a short grace timer on
 * every event; if nothing happened before it fires and all are still
 * blocked, the wait-for graph (who waits for whom) names the ranks and,
 * when there is one, the cycle among them.
 */
import { DeadlockError } from '../errors.ts';
import type { BlockedRank } from '../types.ts';
import { findCycle } from './wait-graph.ts';

/** What a blocked rank waits for, as the fabric knows it. */
export type BlockedWait = { rank: number; kind: 'barrier' } | { rank: number; kind: 'recv'; src: number; tag: number; sources: number[] };

/**
 * The DeadlockError of ranks blocked in `waits` (the first open wait of
 * every running rank), with the barrier's missing ranks from `inBarrier`,
 * the ranks that already finished, and each rank's collective-call count.
 */
export function describeDeadlock(worldSize: number, waits: readonly BlockedWait[], inBarrier: ReadonlySet<number>, finished: number[], announced: readonly number[]): DeadlockError {
  const blocked: BlockedRank[] = [];
  const edges = new Map<number, number[]>();
  for (const w of waits) {
    if (w.kind === 'barrier') {
      const missing = [...Array(worldSize).keys()].filter((x) => !inBarrier.has(x));
      blocked.push({ rank: w.rank, waitingFor: { op: 'barrier', missing } });
      edges.set(w.rank, missing);
    } else {
      blocked.push({ rank: w.rank, waitingFor: { op: 'recv', src: w.src, tag: w.tag } });
      edges.set(w.rank, w.sources);
    }
  }
  return new DeadlockError(blocked, findCycle(edges), finished, [...announced]);
}

/**
 * The grace timer: `changed()` on every fabric event; when all ranks stay
 * blocked for `graceMs` with no event in between, `declare()` runs once.
 */
export class DeadlockWatch {
  private events = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly graceMs: number,
    private readonly allBlocked: () => boolean,
    private readonly declare: () => void,
  ) {}

  /** Something happened; if everyone is blocked now, check again after the grace period. */
  changed(): void {
    this.events++;
    if (!this.allBlocked()) return;
    clearTimeout(this.timer);
    const seen = this.events;
    this.timer = setTimeout(() => {
      if (this.events === seen && this.allBlocked()) this.declare();
    }, this.graceMs);
  }

  /** Stops the timer. */
  stop(): void {
    clearTimeout(this.timer);
  }
}
