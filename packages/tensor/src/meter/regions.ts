/**
 * Profiler regions, like torch's `record_function`: a label around a piece
 * of work. A region's figures are inclusive (they contain the regions nested
 * in it), and a label entered again inside itself counts once.
 */
import type { Stream } from './stream.ts';

/** What a region label accumulated over all the times it was entered. */
export class RegionStats {
  calls = 0;
  flops = 0;
  bytes = 0;
  computeUs = 0;
  exposedCommUs = 0;
  idleUs = 0;
  /** Virtual time from entering to leaving, summed over calls. */
  totalUs = 0;

  constructor(readonly label: string) {}
}

/** One open region. */
export class RegionFrame {
  /** False when the same label is already open further out: that frame counts instead. */
  readonly counts: boolean;
  readonly startUs: number;

  constructor(
    readonly stats: RegionStats,
    readonly parent: RegionFrame | null,
    readonly stream: Stream,
  ) {
    let outer = parent;
    while (outer && outer.stats !== stats) outer = outer.parent;
    this.counts = outer === null;
    this.startUs = stream.clock;
  }
}
