/**
 * The units a numeric answer may carry. A question asks for one unit (GB,
 * ms, ...); an answer in another unit of the same dimension is converted
 * (12500 MB is 12.5 GB), and an answer in another dimension is malformed
 * (a time is no answer to "how many bytes"), so it costs no attempt.
 */

/** What a unit measures. */
export type Dimension = 'bytes' | 'time' | 'bandwidth';

/** One unit: its symbol as questions write it, what it measures, and its size in the dimension's base unit. */
export interface UnitDef {
  symbol: string;
  dimension: Dimension;
  /** Size in the base unit: bytes, microseconds, GB/s. */
  factor: number;
  /** Other spellings accepted in answers (compared case-sensitively: Mb is not MB). */
  aliases: readonly string[];
}

const UNITS: readonly UnitDef[] = [
  { symbol: 'B', dimension: 'bytes', factor: 1, aliases: ['byte', 'bytes'] },
  { symbol: 'KB', dimension: 'bytes', factor: 1e3, aliases: ['kB'] },
  { symbol: 'MB', dimension: 'bytes', factor: 1e6, aliases: [] },
  { symbol: 'GB', dimension: 'bytes', factor: 1e9, aliases: [] },
  { symbol: 'TB', dimension: 'bytes', factor: 1e12, aliases: [] },
  { symbol: 'KiB', dimension: 'bytes', factor: 2 ** 10, aliases: [] },
  { symbol: 'MiB', dimension: 'bytes', factor: 2 ** 20, aliases: [] },
  { symbol: 'GiB', dimension: 'bytes', factor: 2 ** 30, aliases: [] },
  { symbol: 'TiB', dimension: 'bytes', factor: 2 ** 40, aliases: [] },
  // µ is U+00B5 (micro sign), μ is U+03BC (Greek mu): keyboards produce either.
  { symbol: 'µs', dimension: 'time', factor: 1, aliases: ['us', 'μs', 'microseconds'] },
  { symbol: 'ms', dimension: 'time', factor: 1e3, aliases: ['milliseconds'] },
  { symbol: 's', dimension: 'time', factor: 1e6, aliases: ['sec', 'seconds'] },
  { symbol: 'GB/s', dimension: 'bandwidth', factor: 1, aliases: [] },
  { symbol: 'MB/s', dimension: 'bandwidth', factor: 1e-3, aliases: [] },
];

const BY_SPELLING = new Map<string, UnitDef>();
for (const u of UNITS) for (const s of [u.symbol, ...u.aliases]) BY_SPELLING.set(s, u);

/** The symbols a question may ask for. */
export type UnitSymbol = 'B' | 'KB' | 'MB' | 'GB' | 'TB' | 'KiB' | 'MiB' | 'GiB' | 'TiB' | 'µs' | 'ms' | 's' | 'GB/s' | 'MB/s';

/** The unit spelled `text` (a symbol or an alias), or undefined. */
export function findUnit(text: string): UnitDef | undefined {
  return BY_SPELLING.get(text);
}

/** The unit with symbol `symbol`; throws for a symbol no question may use. */
export function unitOf(symbol: string): UnitDef {
  const u = UNITS.find((x) => x.symbol === symbol);
  if (!u) throw new RangeError(`unknown unit '${symbol}': units are ${UNITS.map((x) => x.symbol).join(', ')}`);
  return u;
}

/** Every unit of `dimension`, by symbol (for messages that list what is accepted). */
export function unitsOf(dimension: Dimension): string[] {
  return UNITS.filter((u) => u.dimension === dimension).map((u) => u.symbol);
}

/** `value` in unit `from` expressed in unit `to` (same dimension). */
export function convert(value: number, from: UnitDef, to: UnitDef): number {
  if (from.dimension !== to.dimension) throw new RangeError(`BUG: cannot convert ${from.symbol} (${from.dimension}) to ${to.symbol} (${to.dimension})`);
  return from === to ? value : (value * from.factor) / to.factor;
}

/** How a message names a dimension: "a size", "a time". */
export function describeDimension(d: Dimension): string {
  return d === 'bytes' ? 'a size in bytes' : d === 'time' ? 'a time' : 'a bandwidth';
}
