/**
 * `formatProfile(result)`: the device figures of a launch as a table per
 * rank, in the spirit of torch.profiler's `key_averages().table()`: a line
 * of totals, then a row per profiler region, per op kind and per background
 * stream, with calls, FLOPs, bytes moved and where the virtual time went.
 */
import type { LaunchResult, RankDeviceStats } from '../types.ts';
import { formatBytes, formatUs } from '../report.ts';

/** Options of formatProfile. */
export interface ProfileFormat {
  /** Only these ranks (default: all). */
  ranks?: number[];
  /** Op kinds shown per rank, by compute time (default 12; the rest are summed in one row). */
  topOps?: number;
}

/** A count with an SI prefix: 1.50 K, 78.64 M, 2.10 G. */
export function formatCount(n: number): string {
  const units = ['', ' K', ' M', ' G', ' T', ' P'];
  let i = 0;
  while (Math.abs(n) >= 1000 && i < units.length - 1) {
    n /= 1000;
    i++;
  }
  return i === 0 ? String(Math.round(n)) : `${n.toFixed(2)}${units[i]}`;
}

function pct(part: number, whole: number): string {
  return whole > 0 ? `${((100 * part) / whole).toFixed(1)}%` : '-';
}

interface Row {
  name: string;
  calls: string;
  flops: string;
  bytes: string;
  compute: string;
  exposed: string;
  idle: string;
  total: string;
  share: string;
}

const HEADER: Row = { name: 'Name', calls: 'Calls', flops: 'FLOPs', bytes: 'Bytes', compute: 'Compute', exposed: 'Exposed comm', idle: 'Idle', total: 'Total', share: '% of time' };
const KEYS = Object.keys(HEADER) as (keyof Row)[];

function table(rows: Row[]): string {
  const width = (k: keyof Row) => Math.max(...[HEADER, ...rows].map((r) => r[k].length));
  const line = (r: Row) => KEYS.map((k) => (k === 'name' ? r[k].padEnd(width(k)) : r[k].padStart(width(k)))).join('  ');
  return [line(HEADER), KEYS.map((k) => '-'.repeat(width(k))).join('  '), ...rows.map(line)].join('\n');
}

function rankTable(d: RankDeviceStats, topOps: number): string {
  const vt = d.vtUs;
  const rows: Row[] = [];
  for (const r of d.regions) {
    rows.push({ name: `region ${r.label}`, calls: String(r.calls), flops: formatCount(r.flops), bytes: formatBytes(r.bytes), compute: formatUs(r.computeUs), exposed: formatUs(r.exposedCommUs), idle: formatUs(r.idleUs), total: formatUs(r.totalUs), share: pct(r.totalUs, vt) });
  }
  const ops = [...d.ops].sort((a, b) => b.computeUs - a.computeUs || b.flops - a.flops);
  const shown = ops.slice(0, topOps);
  for (const o of shown) {
    rows.push({ name: o.kind.startsWith('elapse: ') ? o.kind : `op ${o.kind}`, calls: String(o.calls), flops: formatCount(o.flops), bytes: formatBytes(o.bytes), compute: formatUs(o.computeUs), exposed: '', idle: '', total: formatUs(o.computeUs), share: pct(o.computeUs, vt) });
  }
  const rest = ops.slice(topOps);
  if (rest.length > 0) {
    const sum = (f: (o: (typeof ops)[number]) => number) => rest.reduce((s, o) => s + f(o), 0);
    rows.push({ name: `(${rest.length} other ops)`, calls: String(sum((o) => o.calls)), flops: formatCount(sum((o) => o.flops)), bytes: formatBytes(sum((o) => o.bytes)), compute: formatUs(sum((o) => o.computeUs)), exposed: '', idle: '', total: formatUs(sum((o) => o.computeUs)), share: pct(sum((o) => o.computeUs), vt) });
  }
  // Background streams, summed by label (a stream per all-reduce adds up quickly).
  const byLabel = new Map<string, { count: number; flops: number; bytes: number; computeUs: number; exposedCommUs: number; idleUs: number }>();
  for (const s of d.streams.slice(1)) {
    const g = byLabel.get(s.label) ?? { count: 0, flops: 0, bytes: 0, computeUs: 0, exposedCommUs: 0, idleUs: 0 };
    g.count++;
    g.flops += s.flops;
    g.bytes += s.bytes;
    g.computeUs += s.computeUs;
    g.exposedCommUs += s.exposedCommUs;
    g.idleUs += s.idleUs;
    byLabel.set(s.label, g);
  }
  for (const [label, g] of byLabel) {
    rows.push({ name: `stream ${label}`, calls: String(g.count), flops: formatCount(g.flops), bytes: formatBytes(g.bytes), compute: formatUs(g.computeUs), exposed: formatUs(g.exposedCommUs), idle: formatUs(g.idleUs), total: '', share: '' });
  }
  const m = d.memory;
  // The main stream's time adds up to vt; background streams run beside it on their own time.
  const main = d.streams[0] ?? { computeUs: d.computeUs, elapsedUs: d.elapsedUs };
  const background = d.computeUs - main.computeUs;
  const head =
    `rank ${d.rank}${d.complete ? '' : ' (stopped early: figures as last reported)'} · virtual time ${formatUs(vt)}: ` +
    `compute ${formatUs(main.computeUs)} (${pct(main.computeUs, vt)})` +
    (main.elapsedUs > 0 ? ` · elapse ${formatUs(main.elapsedUs)} (${pct(main.elapsedUs, vt)})` : '') +
    ` · exposed communication ${formatUs(d.exposedCommUs)} (${pct(d.exposedCommUs, vt)}) · idle ${formatUs(d.idleUs)} (${pct(d.idleUs, vt)})` +
    (background > 0 ? ` · background streams compute ${formatUs(background)}` : '') +
    ` · on the wire ${formatUs(d.commUs)} · ${formatCount(d.flops)}FLOP · memory peak ${formatBytes(m.peakBytes)}, in use ${formatBytes(m.inUseBytes)} of ${formatBytes(m.capacityBytes)}`;
  return rows.length > 0 ? `${head}\n${table(rows)}` : head;
}

/** The device figures of `result` as text; empty when the launch had no device. */
export function formatProfile(result: Pick<LaunchResult, 'device'>, opts: ProfileFormat = {}): string {
  const dev = result.device;
  if (!dev) return '';
  const { spec } = dev;
  const title = `device ${spec.name}: ${formatCount(spec.flops.float32)}FLOP/s float32, ${formatCount(spec.flops.float64)}FLOP/s float64, ${formatCount(spec.memoryBandwidth)}B/s memory bandwidth, ${formatBytes(spec.memoryBytes)}`;
  const ranks = dev.ranks.filter((d) => !opts.ranks || opts.ranks.includes(d.rank));
  return [title, ...ranks.map((d) => rankTable(d, opts.topOps ?? 12))].join('\n\n');
}
