/**
 * The network side of virtual time, under the alpha-beta cost model. Each
 * rank keeps its own clock (its device's compute plus its waits: see
 * device/rank-runtime.ts) and tells the fabric the time of every call; this
 * clock times the messages between those calls, so what a schedule of
 * messages costs comes out the same whatever the real thread scheduling was.
 *
 * - A message of b bytes occupies its sender's link for b / bandwidth: it
 *   leaves in the first gap of the link's schedule, at or after the sender's
 *   time when it sent, that is long enough; and it arrives alpha + b /
 *   bandwidth after it left (plus any injected delay). With one stream per
 *   rank, sends come in time order and this is the link's queue; a
 *   background stream can send at an earlier virtual time than a message the
 *   fabric already placed, and then goes first, as it would on the wire.
 * - A receive completes at max(the time the receiver asked to wait, the
 *   message's arrival).
 */
import type { CostModel } from '../types.ts';

/** The default network: 10 µs latency, 10 Gbit/s (1250 bytes per µs). */
export const DEFAULT_COST: CostModel = Object.freeze({ alphaUs: 10, bytesPerUs: 1250 });

/**
 * When one link is busy: sorted, disjoint intervals (touching ones merged,
 * so back-to-back traffic stays one interval).
 */
class LinkSchedule {
  private readonly starts: number[] = [];
  private readonly ends: number[] = [];

  /** Books `length` µs at the first gap at or after `at`; returns its start. */
  book(at: number, length: number): number {
    const { starts, ends } = this;
    // The first interval that ends after `at` (binary search: ends are sorted too).
    let lo = 0;
    let hi = ends.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (ends[mid]! > at) hi = mid;
      else lo = mid + 1;
    }
    let t = at;
    let i = lo;
    while (i < starts.length && starts[i]! < t + length) {
      t = Math.max(t, ends[i]!);
      i++;
    }
    // [t, t + length) fits before interval i.
    const end = t + length;
    const joinsLeft = i > 0 && ends[i - 1] === t;
    const joinsRight = i < starts.length && starts[i] === end;
    if (joinsLeft && joinsRight) {
      ends[i - 1] = ends[i]!;
      starts.splice(i, 1);
      ends.splice(i, 1);
    } else if (joinsLeft) ends[i - 1] = end;
    else if (joinsRight) starts[i] = t;
    else if (length > 0) {
      starts.splice(i, 0, t);
      ends.splice(i, 0, end);
    }
    return t;
  }
}

/** Per-rank latest known virtual time and per-rank outgoing-link schedules. */
export class VirtualClock {
  /** Each rank's latest virtual time the fabric has heard of, in microseconds. */
  readonly now: number[];
  private readonly links: LinkSchedule[];

  constructor(
    worldSize: number,
    readonly cost: CostModel,
  ) {
    this.now = new Array<number>(worldSize).fill(0);
    this.links = Array.from({ length: worldSize }, () => new LinkSchedule());
  }

  /** `rank` made a call at virtual time `us`. */
  see(rank: number, us: number): void {
    if (us > this.now[rank]!) this.now[rank] = us;
  }

  /** Sends `bytes` from `src` at its time `atUs`: returns when the message leaves and when it arrives. */
  send(src: number, bytes: number, extraDelayUs = 0, atUs = this.now[src]!): { startUs: number; endUs: number } {
    const wire = bytes / this.cost.bytesPerUs;
    const startUs = this.links[src]!.book(atUs, wire);
    return { startUs, endUs: startUs + this.cost.alphaUs + wire + extraDelayUs };
  }

  /**
   * Ranks that entered a barrier at `entries` (their times) leave together:
   * at the latest entry plus the cost of a dissemination barrier,
   * ceil(log2 N) rounds of empty messages.
   */
  barrier(entries: readonly number[], worldSize: number): number {
    const rounds = worldSize > 1 ? Math.ceil(Math.log2(worldSize)) : 0;
    return Math.max(...entries) + rounds * this.cost.alphaUs;
  }
}
