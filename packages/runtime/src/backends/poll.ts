/**
 * When the launching thread of the workers backend polls the ranks' ports
 * for messages instead of sleeping until one comes (LaunchSpec.pollUs; the
 * poll loop itself is in workers.ts): the limits, and PollCost, which
 * decides whether polling has paid lately.
 */
import { availableParallelism } from 'node:os';

/** Default of LaunchSpec.pollUs on the workers backend. */
export const DEFAULT_POLL_US = 100;
/** The longest the launching thread polls without returning to its event loop. */
export const POLL_SLICE_MS = 2;
/** How long it polls when it has no core to itself: a rank's messages right after a send come within this. */
export const TRAILING_MS = 0.02;
/** Cores of this machine: polling takes one. */
export const CORES = availableParallelism();
/** A message that comes after this much quiet would, without polling, have found the thread asleep. */
export const WAKE_GAP_MS = 0.01;
/** Polling pays while it spins at most this long per wake-up it saves (a wake-up costs about 30 µs). */
export const SPIN_PER_SAVED_WAKE_MS = 0.08;

/**
 * Whether polling has paid lately: CPU time spent spinning per thread
 * wake-up it saved, over the last few dozen polls (older ones fade out).
 * A ping-pong saves a wake-up for every 40-50 µs of spinning; ranks that
 * compute between small messages can cost 200 µs or more per saved wake-up,
 * and the spinning then slows them down. When polling does not pay, one
 * poll in PROBE_EVERY still runs in full, to notice when it pays again.
 */
export class PollCost {
  private spentMs = 0;
  private saved = 1; // start out polling
  private sinceProbe = 0;
  private static readonly FADE = 0.95;
  private static readonly PROBE_EVERY = 16;

  /** Whether the next poll should use its full window. */
  worthIt(): boolean {
    if (this.spentMs <= SPIN_PER_SAVED_WAKE_MS * this.saved) return true;
    return ++this.sinceProbe % PollCost.PROBE_EVERY === 0;
  }

  /** One poll spun `spinMs` (handling messages excluded) and saved `saved` wake-ups. */
  record(spinMs: number, saved: number): void {
    this.spentMs = this.spentMs * PollCost.FADE + spinMs;
    this.saved = this.saved * PollCost.FADE + saved;
  }
}
