/**
 * Collective-call matching: every rank must make the same collective calls
 * in the same order. Each rank announces its k-th call (op, dtype, shape,
 * root...) before it sends anything for it; the first announcement of call
 * k is kept until all ranks have made theirs, and one that differs is a
 * mismatch. Once a mismatch is known, every rank that reaches that call (or
 * has) is in it: its results could be garbage. Ranks mismatched in this way
 * fail with the CollectiveMismatchError, which names both calls, instead of
 * deadlocking or reading each other's messages as the wrong thing.
 */
import { CollectiveMismatchError, type CollectiveCall } from '../errors.ts';

/** What an announcement found: the mismatch, the ranks now in it, and whether it was found just now. */
export interface Mismatch {
  error: CollectiveMismatchError;
  ranks: number[];
  found: boolean;
}

/** The collective calls of one launch, matched across ranks. */
export class CollectiveCalls {
  /** The first announcement of each call index not yet made by every rank. */
  private readonly first = new Map<number, { rank: number; call: CollectiveCall; count: number }>();
  /** How many calls each rank has announced. */
  readonly announced: number[];
  private mismatch: CollectiveMismatchError | undefined;

  constructor(private readonly worldSize: number) {
    this.announced = new Array<number>(worldSize).fill(0);
  }

  /** `rank` starts its `index`-th call: null when it matches so far, else the mismatch and who is in it. */
  announce(rank: number, index: number, call: CollectiveCall): Mismatch | null {
    this.announced[rank] = index + 1;
    if (this.mismatch && index >= this.mismatch.index) return { error: this.mismatch, ranks: [rank], found: false };
    const first = this.first.get(index);
    if (!first) {
      this.first.set(index, { rank, call, count: 1 });
      return null;
    }
    if (++first.count === this.worldSize) this.first.delete(index);
    if (JSON.stringify(first.call) === JSON.stringify(call)) return null;
    const error = new CollectiveMismatchError(index, first.rank, first.call, rank, call);
    this.mismatch = error;
    const ranks = [...Array(this.worldSize).keys()].filter((r) => this.announced[r]! > index);
    return { error, ranks, found: true };
  }
}
