/**
 * The virtual clock: one time per rank, advanced only by communication,
 * under the alpha-beta cost model. Compute is free in virtual time, so the
 * clock measures what a schedule of messages costs on an idealised network
 * and comes out the same whatever the real thread scheduling was.
 *
 * - A message of b bytes leaves its sender at max(sender's clock, the moment
 *   the sender's link is free), occupies that link for b / bandwidth, and
 *   arrives alpha + b / bandwidth after it left (plus any injected delay).
 * - A receive completes at max(the time it was posted, the message's arrival);
 *   the receiver's clock moves to that time when it waits for the receive.
 */
import type { CostModel } from '../types.ts';

/** The default network: 10 µs latency, 10 Gbit/s (1250 bytes per µs). */
export const DEFAULT_COST: CostModel = Object.freeze({ alphaUs: 10, bytesPerUs: 1250 });

/** Per-rank virtual time and per-rank outgoing-link availability. */
export class VirtualClock {
  /** Each rank's current virtual time, in microseconds. */
  readonly now: number[];
  private readonly linkFree: number[];

  constructor(
    worldSize: number,
    readonly cost: CostModel,
  ) {
    this.now = new Array<number>(worldSize).fill(0);
    this.linkFree = new Array<number>(worldSize).fill(0);
  }

  /** Sends `bytes` from `src`: returns when the message leaves and when it arrives. */
  send(src: number, bytes: number, extraDelayUs = 0): { startUs: number; endUs: number } {
    const wire = bytes / this.cost.bytesPerUs;
    const startUs = Math.max(this.now[src]!, this.linkFree[src]!);
    this.linkFree[src] = startUs + wire;
    return { startUs, endUs: startUs + this.cost.alphaUs + wire + extraDelayUs };
  }

  /** A receive posted at `postedUs` for a message arriving at `arrivalUs` is waited for by `rank`. */
  completeRecv(rank: number, postedUs: number, arrivalUs: number): number {
    this.now[rank] = Math.max(this.now[rank]!, postedUs, arrivalUs);
    return this.now[rank]!;
  }

  /**
   * All `ranks` leave a barrier together: at the latest arrival plus the cost
   * of a dissemination barrier, ceil(log2 N) rounds of empty messages.
   */
  barrier(ranks: readonly number[], worldSize: number): number {
    const rounds = worldSize > 1 ? Math.ceil(Math.log2(worldSize)) : 0;
    const t = Math.max(...ranks.map((r) => this.now[r]!)) + rounds * this.cost.alphaUs;
    for (const r of ranks) this.now[r] = t;
    return t;
  }
}
