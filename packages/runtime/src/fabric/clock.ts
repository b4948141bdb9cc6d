/**
 * The network side of virtual time, under the alpha-beta cost model. Each
 * rank keeps its own clock (its device's compute plus its waits: see
 * device/rank-runtime.ts) and tells the fabric the time of every call; this
 * clock times the messages between those calls, so what a schedule of
 * messages costs comes out the same whatever the real thread scheduling was.
 *
 * - A message of b bytes leaves its sender at max(the sender's time when it
 *   sent, the moment the sender's link is free), occupies that link for
 *   b / bandwidth, and arrives alpha + b / bandwidth after it left (plus any
 *   injected delay).
 * - A receive completes at max(the time the receiver asked to wait, the
 *   message's arrival).
 */
import type { CostModel } from '../types.ts';

/** The default network: 10 µs latency, 10 Gbit/s (1250 bytes per µs). */
export const DEFAULT_COST: CostModel = Object.freeze({ alphaUs: 10, bytesPerUs: 1250 });

/** Per-rank latest known virtual time and per-rank outgoing-link availability. */
export class VirtualClock {
  /** Each rank's latest virtual time the fabric has heard of, in microseconds. */
  readonly now: number[];
  private readonly linkFree: number[];

  constructor(
    worldSize: number,
    readonly cost: CostModel,
  ) {
    this.now = new Array<number>(worldSize).fill(0);
    this.linkFree = new Array<number>(worldSize).fill(0);
  }

  /** `rank` made a call at virtual time `us`. */
  see(rank: number, us: number): void {
    if (us > this.now[rank]!) this.now[rank] = us;
  }

  /** Sends `bytes` from `src` at its time `atUs`: returns when the message leaves and when it arrives. */
  send(src: number, bytes: number, extraDelayUs = 0, atUs = this.now[src]!): { startUs: number; endUs: number } {
    const wire = bytes / this.cost.bytesPerUs;
    const startUs = Math.max(atUs, this.linkFree[src]!);
    this.linkFree[src] = startUs + wire;
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
