/**
 * Words for people: a one-line summary of a launch and a line per rank outcome.
 */
import type { LaunchResult, RankOutcome } from './types.ts';

/** Bytes as B, KiB, MiB or GiB. */
export function formatBytes(b: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB'];
  let i = 0;
  while (b >= 1024 && i < units.length - 1) {
    b /= 1024;
    i++;
  }
  return `${i === 0 ? b : b.toFixed(1)} ${units[i]}`;
}

/** Microseconds as µs, ms or s. */
export function formatUs(us: number): string {
  if (us < 1000) return `${us.toFixed(1)} µs`;
  if (us < 1e6) return `${(us / 1000).toFixed(2)} ms`;
  return `${(us / 1e6).toFixed(3)} s`;
}

/** One line: how many ranks succeeded, messages, bytes, virtual time, wall time. */
export function formatSummary(r: LaunchResult): string {
  const ok = r.ranks.filter((x) => x.status === 'ok').length;
  const bytes = r.stats.reduce((s, x) => s + x.bytesSent, 0);
  const vt = Math.max(0, ...r.stats.map((s) => s.vtUs));
  const unreceived = r.stats.reduce((s, x) => s + x.unreceived, 0);
  const parts = [
    `${ok}/${r.ranks.length} ranks ok`,
    `${r.trace.length} message${r.trace.length === 1 ? '' : 's'}`,
    `${formatBytes(bytes)} sent`,
    `virtual time ${formatUs(vt)}`,
    `wall ${r.wallMs} ms`,
  ];
  if (unreceived > 0) parts.push(`${unreceived} message(s) never received`);
  return parts.join(' · ');
}

/** One line per rank: its status and, on failure, its error. */
export function formatOutcome(o: RankOutcome): string {
  if (o.status === 'ok') return `rank ${o.rank}: ok`;
  return `rank ${o.rank}: ${o.status}: ${o.error ? `${o.error.name}: ${o.error.message}` : 'no error recorded'}`;
}
