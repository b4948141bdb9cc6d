/**
 * `chromeTrace(result)`: a launch in the Chrome Trace Event Format, which
 * Perfetto (ui.perfetto.dev) and chrome://tracing open. Timestamps are
 * virtual microseconds.
 *
 * - one process per rank ("rank 0", ...);
 * - a thread per stream of the rank ("main", then each background stream),
 *   with its ops, profiler regions and waits as complete ('X') events,
 *   properly nested (a region encloses what ran inside it);
 * - message threads: each message is a slice on its sender ("send lane k")
 *   and on its receiver ("recv lane k"), from when it left to when it
 *   arrived, joined by a flow arrow. Messages overlap in time (a link sends
 *   the next while the last is still in flight), so they are spread over as
 *   many lanes as needed for no two slices on a lane to overlap;
 * - a counter track per rank with the device memory in use at each point.
 *
 * Op, region and wait events need the launch's timeline (`timeline: true`);
 * messages are always there.
 */
import type { LaunchResult } from '../types.ts';

/** One event of the Trace Event Format (the fields dtlab uses). */
export interface TraceEventRecord {
  name: string;
  ph: 'X' | 'M' | 'C' | 's' | 'f';
  pid: number;
  tid?: number;
  ts?: number;
  dur?: number;
  cat?: string;
  id?: number;
  bp?: 'e';
  args?: Record<string, unknown>;
}

/** A whole trace file: the JSON Object Format. */
export interface ChromeTrace {
  traceEvents: TraceEventRecord[];
  displayTimeUnit: 'ms' | 'ns';
  otherData: Record<string, unknown>;
}

const STREAM_TID = 1;
const SEND_TID = 1000;
const RECV_TID = 2000;
// A flow's end sits this far inside its slice, so that viewers bind it to that slice.
const INSIDE = 1e-3;

/** Assigns each interval the first lane whose last interval ended by its start. */
function lanes(intervals: { start: number; end: number }[]): number[] {
  const order = intervals.map((_, i) => i).sort((a, b) => intervals[a]!.start - intervals[b]!.start || a - b);
  const laneEnds: number[] = [];
  const out = new Array<number>(intervals.length);
  for (const i of order) {
    const { start, end } = intervals[i]!;
    let lane = laneEnds.findIndex((e) => e <= start);
    if (lane < 0) lane = laneEnds.push(end) - 1;
    else laneEnds[lane] = end;
    out[i] = lane;
  }
  return out;
}

/** The launch `result` as a Chrome trace (see the file comment). */
export function chromeTrace(result: Pick<LaunchResult, 'ranks' | 'trace' | 'stats' | 'device'>): ChromeTrace {
  const events: TraceEventRecord[] = [];
  const worldSize = result.ranks.length;
  const threadNames = new Map<string, string>();
  const thread = (pid: number, tid: number, name: string) => threadNames.set(`${pid}:${tid}`, name);
  for (let rank = 0; rank < worldSize; rank++) {
    events.push({ name: 'process_name', ph: 'M', pid: rank, args: { name: `rank ${rank}` } });
    events.push({ name: 'process_sort_index', ph: 'M', pid: rank, args: { sort_index: rank } });
  }

  for (const d of result.device?.ranks ?? []) {
    const line = d.timeline;
    if (!line) continue;
    for (const s of line.streams) thread(d.rank, STREAM_TID + s.id, s.id === 0 ? 'main stream' : `stream ${s.label}`);
    for (const r of line.regions) events.push({ name: r.label, cat: 'region', ph: 'X', pid: d.rank, tid: STREAM_TID + r.stream, ts: r.startUs, dur: r.endUs - r.startUs });
    for (const o of line.ops) events.push({ name: o.kind, cat: 'op', ph: 'X', pid: d.rank, tid: STREAM_TID + o.stream, ts: o.startUs, dur: o.durUs, args: { flops: o.flops, bytes: o.bytes } });
    for (const w of line.waits) {
      events.push({ name: `wait: ${w.what}`, cat: 'wait', ph: 'X', pid: d.rank, tid: STREAM_TID + w.stream, ts: w.startUs, dur: w.endUs - w.startUs, args: { idleUs: w.idleUs, exposedCommUs: w.endUs - w.startUs - w.idleUs } });
    }
    for (const m of line.memory) events.push({ name: 'device memory in use', cat: 'memory', ph: 'C', pid: d.rank, ts: m.vtUs, args: { bytes: m.inUseBytes } });
  }

  // Messages: a slice on each side, on lanes per rank, and a flow from sender to receiver.
  const msgs = result.trace.map((e) => ({ e, start: e.vtStartUs, end: e.vtEndUs }));
  const sendLane = new Map<number, number>();
  const recvLane = new Map<number, number>();
  for (let rank = 0; rank < worldSize; rank++) {
    const out = msgs.filter((m) => m.e.src === rank);
    lanes(out).forEach((lane, i) => sendLane.set(out[i]!.e.seq, lane));
    const inc = msgs.filter((m) => m.e.dst === rank);
    lanes(inc).forEach((lane, i) => recvLane.set(inc[i]!.e.seq, lane));
  }
  for (const { e } of msgs) {
    const dur = e.vtEndUs - e.vtStartUs;
    const args = { bytes: e.bytes, count: e.count, dtype: e.dtype, tag: e.tag, seq: e.seq };
    const st = SEND_TID + sendLane.get(e.seq)!;
    const rt = RECV_TID + recvLane.get(e.seq)!;
    thread(e.src, st, `send lane ${st - SEND_TID}`);
    thread(e.dst, rt, `recv lane ${rt - RECV_TID}`);
    events.push({ name: `send to rank ${e.dst}`, cat: 'message', ph: 'X', pid: e.src, tid: st, ts: e.vtStartUs, dur, args });
    events.push({ name: `recv from rank ${e.src}`, cat: 'message', ph: 'X', pid: e.dst, tid: rt, ts: e.vtStartUs, dur, args });
    const inside = Math.min(INSIDE, dur / 2);
    events.push({ name: 'message', cat: 'message', ph: 's', id: e.seq, pid: e.src, tid: st, ts: e.vtStartUs + inside });
    events.push({ name: 'message', cat: 'message', ph: 'f', bp: 'e', id: e.seq, pid: e.dst, tid: rt, ts: e.vtEndUs - inside });
  }

  for (const [key, name] of threadNames) {
    const [pid, tid] = key.split(':').map(Number) as [number, number];
    events.push({ name: 'thread_name', ph: 'M', pid, tid, args: { name } });
    events.push({ name: 'thread_sort_index', ph: 'M', pid, tid, args: { sort_index: tid } });
  }
  const otherData: Record<string, unknown> = { worldSize, clock: 'virtual microseconds' };
  if (result.device) {
    otherData.device = result.device.spec;
    const dropped = result.device.ranks.map((d) => d.timeline?.dropped ?? 0);
    if (dropped.some((n) => n > 0)) otherData.timelineEventsDropped = dropped;
  }
  return { traceEvents: events, displayTimeUnit: 'ms', otherData };
}
