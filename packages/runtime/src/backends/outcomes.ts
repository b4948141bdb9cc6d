/**
 * Bookkeeping both backends share: one outcome per rank, recorded once, and
 * the timeout report for ranks that had not finished.
 */
import type { Fabric } from '../fabric.ts';
import { CommTimeoutError, RankTimeoutError } from '../errors.ts';
import type { RankOutcome } from '../types.ts';

/** Collects rank outcomes; `done` resolves when every rank has one. */
export class Outcomes {
  readonly ranks: (RankOutcome | undefined)[];
  private remaining: number;
  private resolveDone!: () => void;
  readonly done: Promise<void>;

  constructor(worldSize: number) {
    this.ranks = new Array(worldSize).fill(undefined);
    this.remaining = worldSize;
    this.done = new Promise((r) => (this.resolveDone = r));
  }

  /** Records `outcome` unless the rank already has one. Returns whether it was recorded. */
  settle(outcome: RankOutcome): boolean {
    if (this.ranks[outcome.rank]) return false;
    this.ranks[outcome.rank] = outcome;
    if (--this.remaining === 0) this.resolveDone();
    return true;
  }

  /** True when every rank has an outcome. */
  get settled(): boolean {
    return this.remaining === 0;
  }

  /** True when the rank has an outcome. */
  has(rank: number): boolean {
    return this.ranks[rank] !== undefined;
  }

  /** Every rank without an outcome gets status 'timeout' with what it was doing. */
  timeOutRemaining(fabric: Fabric, timeoutMs: number): number[] {
    const stopped: number[] = [];
    for (let r = 0; r < this.ranks.length; r++) {
      if (this.ranks[r]) continue;
      const { waiting, waitedMs } = fabric.describe(r);
      const error = waiting ? new CommTimeoutError(r, waiting, waitedMs) : new RankTimeoutError(r, timeoutMs);
      this.settle({ rank: r, status: 'timeout', error });
      stopped.push(r);
    }
    return stopped;
  }

  /**
   * The outcomes, all present. A rank that returned but took part in a
   * mismatched collective call (found after it finished) ends in that error:
   * whatever it returned may be garbage.
   */
  all(fabric?: Fabric): RankOutcome[] {
    return this.ranks.map((o, r) => {
      const outcome = o ?? { rank: r, status: 'killed' as const, error: new Error(`BUG: rank ${r} has no outcome`) };
      const mismatch = fabric?.mismatchOf(r);
      return outcome.status === 'ok' && mismatch ? { rank: r, status: 'error' as const, error: mismatch } : outcome;
    });
  }
}
