/**
 * The profiler: regions and op kinds with their figures, the text table,
 * and the Chrome Trace Event Format export, whose structure is checked the
 * way a viewer reads it (metadata, nesting per thread, flows that begin and
 * end inside a slice on each side).
 */
import { describe, expect, it } from 'vitest';
import { randn } from '@dtlab/tensor';
import { chromeTrace, formatProfile, launch, type DeviceSpec, type TraceEventRecord } from '../src/index.ts';
import { BACKENDS, program } from './support.ts';

const DEVICE: DeviceSpec = { name: 'toy', flops: 1e8, memoryBytes: 1 << 26, memoryBandwidth: 1e15 };
const cost = { alphaUs: 10, bytesPerUs: 100 };

describe.each(BACKENDS)('profile regions on the %s backend', (backend) => {
  it('attribute ops and waits to each region, nested ones included, and count calls', async () => {
    const a = randn([10, 20], { seed: 1 });
    const b = randn([20, 10], { seed: 2 });
    const r = await launch({ worldSize: 2, backend, program: program('profiled', 'regions'), args: [a, b], device: DEVICE, cost, timeoutMs: 30_000 });
    expect(r.ok).toBe(true);
    const mm = (2 * 10 * 10 * 20) / 100; // 40 µs
    const add = 200 / 100; // 2 µs: compute-bound, 1 FLOP per element
    const byLabel = (rank: number) => Object.fromEntries(r.device!.ranks[rank]!.regions.map((x) => [x.label, x]));
    expect(byLabel(0).step).toMatchObject({ calls: 2, computeUs: 2 * (mm + add), totalUs: 2 * (mm + add), flops: 2 * (4000 + 200) });
    expect(byLabel(0).forward).toMatchObject({ calls: 2, computeUs: 2 * mm, flops: 8000 });
    expect(byLabel(0).update).toMatchObject({ calls: 2, computeUs: 2 * add, flops: 400 });
    // a is 800 bytes: 10 + 8 µs on the wire; rank 1 waits in 'talk' from 84 µs, when rank 0 sends too.
    expect(byLabel(1).talk).toMatchObject({ calls: 1, computeUs: 0, exposedCommUs: 18, idleUs: 0, totalUs: 18 });
    expect(r.device!.ranks[0]!.ops.map((o) => [o.kind, o.calls])).toEqual([
      ['matmul', 2],
      ['add', 2],
    ]);
  });
});

it('formatProfile prints a table per rank: totals, then a row per region, op kind and background stream', async () => {
  const xs = [randn([4, 8], { seed: 1 }), randn([4, 8], { seed: 2 })];
  const r = await launch({ worldSize: 2, program: program('profiled', 'busy'), args: [xs, randn([8, 8], { seed: 3 })], device: DEVICE, cost });
  const text = formatProfile(r);
  const lines = text.split('\n');
  expect(lines[0]).toBe('device toy: 100.00 MFLOP/s float32, 100.00 MFLOP/s float64, 1.00 PB/s memory bandwidth, 64.0 MiB');
  expect(text).toMatch(/^rank 1 · virtual time [\d.]+ µs: compute [\d.]+ µs \([\d.]+%\) · exposed communication [\d.]+ µs \([\d.]+%\) · idle [\d.]+ µs \([\d.]+%\) · on the wire [\d.]+ µs · [\d.]+ KFLOP · memory peak [\d.]+ KiB, in use [\d.]+ (K?i?B) of 64.0 MiB$/m);
  expect(text).toMatch(/^Name +Calls +FLOPs +Bytes +Compute +Exposed comm +Idle +Total +% of time$/m);
  expect(text).toMatch(/^region micro-batch +2 /m);
  expect(text).toMatch(/^op matmul +2 /m);
  expect(text).toMatch(/^stream side +1 /m);
  expect(formatProfile({})).toBe('');
});

/** Checks what Perfetto and chrome://tracing need of a Trace Event Format file; returns the problems found. */
function problems(events: TraceEventRecord[], worldSize: number): string[] {
  const out: string[] = [];
  const named = new Set(events.filter((e) => e.ph === 'M' && e.name === 'process_name').map((e) => e.pid));
  for (let r = 0; r < worldSize; r++) if (!named.has(r)) out.push(`rank ${r} has no process_name`);
  for (const e of events) {
    if (typeof e.name !== 'string' || !['X', 'M', 'C', 's', 'f'].includes(e.ph)) out.push(`bad event ${JSON.stringify(e)}`);
    if (!Number.isInteger(e.pid) || e.pid < 0 || e.pid >= worldSize) out.push(`pid out of range: ${JSON.stringify(e)}`);
    if (e.ph !== 'M' && !(Number.isFinite(e.ts) && e.ts! >= 0)) out.push(`no timestamp: ${JSON.stringify(e)}`);
    if (e.ph === 'X' && !(Number.isFinite(e.dur) && e.dur! >= 0 && Number.isInteger(e.tid))) out.push(`bad complete event: ${JSON.stringify(e)}`);
  }
  // Slices on one thread nest: each either contains the next or ends before it starts.
  const byThread = new Map<string, TraceEventRecord[]>();
  for (const e of events.filter((x) => x.ph === 'X')) byThread.set(`${e.pid}:${e.tid}`, [...(byThread.get(`${e.pid}:${e.tid}`) ?? []), e]);
  const EPS = 1e-6;
  for (const [thread, xs] of byThread) {
    const sorted = [...xs].sort((a, b) => a.ts! - b.ts! || b.dur! - a.dur!);
    const open: TraceEventRecord[] = [];
    for (const e of sorted) {
      while (open.length && open.at(-1)!.ts! + open.at(-1)!.dur! <= e.ts! + EPS) open.pop();
      const parent = open.at(-1);
      if (parent && e.ts! + e.dur! > parent.ts! + parent.dur! + EPS) out.push(`on ${thread}, ${e.name} overlaps ${parent.name} without nesting`);
      open.push(e);
    }
  }
  // Every flow starts and ends inside a slice of its thread.
  const inside = (e: TraceEventRecord) => (byThread.get(`${e.pid}:${e.tid}`) ?? []).some((x) => x.ts! <= e.ts! && e.ts! <= x.ts! + x.dur!);
  const starts = events.filter((e) => e.ph === 's');
  const ends = new Map(events.filter((e) => e.ph === 'f').map((e) => [e.id, e]));
  for (const s of starts) {
    const f = ends.get(s.id);
    if (!f) out.push(`flow ${s.id} has no end`);
    else if (!inside(s) || !inside(f) || f.ts! < s.ts!) out.push(`flow ${s.id} is not inside its slices`);
  }
  if (ends.size !== starts.length) out.push(`${ends.size} flow ends for ${starts.length} starts`);
  return out;
}

it.each(BACKENDS)('chromeTrace on the %s backend: a valid Trace Event Format file with every op, wait, region and message', async (backend) => {
  const xs = [randn([4, 8], { seed: 1 }), randn([4, 8], { seed: 2 }), randn([4, 8], { seed: 3 })];
  const r = await launch({ worldSize: 2, backend, program: program('profiled', 'busy'), args: [xs, randn([8, 8], { seed: 4 })], device: DEVICE, cost, timeline: true, timeoutMs: 30_000 });
  expect(r.ok).toBe(true);
  const trace = JSON.parse(JSON.stringify(chromeTrace(r))) as ReturnType<typeof chromeTrace>;
  expect(trace.displayTimeUnit).toBe('ms');
  expect(trace.otherData).toMatchObject({ worldSize: 2, device: { name: 'toy' } });
  expect(problems(trace.traceEvents, 2)).toEqual([]);
  const count = (pred: (e: TraceEventRecord) => boolean) => trace.traceEvents.filter(pred).length;
  expect(count((e) => e.cat === 'message' && e.ph === 'X')).toBe(2 * r.trace.length);
  expect(count((e) => e.ph === 's')).toBe(r.trace.length);
  expect(count((e) => e.cat === 'op' && e.pid === 0)).toBe(3);
  expect(count((e) => e.cat === 'region' && e.name === 'micro-batch')).toBe(6);
  // Rank 1 waits for the first activation only: later ones arrive while it computes.
  expect(count((e) => e.cat === 'wait' && e.pid === 1)).toBeGreaterThanOrEqual(1);
  expect(count((e) => e.ph === 'C' && e.name === 'device memory in use')).toBeGreaterThan(0);
  const threads = trace.traceEvents.filter((e) => e.name === 'thread_name').map((e) => `${e.pid}:${(e.args as { name: string }).name}`);
  expect(threads).toEqual(expect.arrayContaining(['0:main stream', '1:main stream', '1:stream side', '0:send lane 0', '1:recv lane 0']));
});
