/**
 * A meter context: which rank's meter the running code charges, on which of
 * that rank's streams, inside which profiler region. Contexts are immutable:
 * entering a region or starting a stream makes a new one.
 */
import type { RankMeter } from './rank-meter.ts';
import type { Stream } from './stream.ts';
import type { RegionFrame } from './regions.ts';

/** What the code running now charges its cost to. */
export interface MeterContext {
  readonly meter: RankMeter;
  readonly stream: Stream;
  /** The innermost open profiler region, or null. */
  readonly region: RegionFrame | null;
}
