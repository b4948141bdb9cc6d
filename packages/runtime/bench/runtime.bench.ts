/**
 * `pnpm bench runtime [--quick]`: how fast messages go between two worker
 * ranks, beside peers measured in the same run.
 *
 * Rows:
 * - round-trip latency of an 8 B and a 4 KiB tensor (rank 0 -> 1 -> 0):
 *   median over many ping-pongs after warm-up, timed inside rank 0 with
 *   performance.now(), beside bare postMessage over the same four hops
 *   (worker -> launcher -> worker and back, no runtime, no polling).
 *   With the default pollUs and again with pollUs 0 (no polling).
 *   Target: 4 KiB at most 100 µs.
 * - one-way transfer bandwidth of 1, 16 and 64 MiB tensors: half a
 *   ping-pong's round trip (median), beside memcpy bandwidth
 *   (Float32Array.prototype.set of the same size between warm arrays, timed
 *   in rank 0 between the round trips, median), and the ratio. Target: 64 MiB
 *   at 40% of memcpy or more.
 *
 * A send copies the tensor (sends are buffered) and the copy moves, without
 * further copies, to the launcher and on to the receiver. `recv` without
 * `into` returns that buffer as a new tensor; `recv` with `into` copies it
 * into the given tensor and keeps the buffer for the rank's next send of
 * that size. So 'recv into' is two copies in memory already mapped, and
 * 'recv new' is one copy into fresh memory, whose first touch (page faults)
 * costs more than the copy: the 'fresh copy' column (slice) shows that cost.
 */
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { launch } from '../src/index.ts';
import { DEFAULT_POLL_US } from '../src/backends/poll.ts';
import type { PingPongTimes } from './rank-programs.ts';
import { meets, reportFigures, type BenchFigure } from '../../../scripts/bench-figures.ts';

const quick = process.argv.includes('--quick');
const PROGRAMS = fileURLToPath(new URL('./rank-programs.ts', import.meta.url));
const MiB = 1 << 20;

/** Runs the ping-pong program on two worker ranks and returns rank 0's timings. */
async function pingPong(bytes: number, warmup: number, samples: number, into = false, memcpy = false, pollUs?: number): Promise<PingPongTimes> {
  const r = await launch({
    worldSize: 2,
    backend: 'workers',
    program: { module: PROGRAMS, export: 'pingPong' },
    args: [bytes / 4, warmup, samples, into, memcpy],
    timeoutMs: 600_000,
    memoryLimitMb: 1024,
    ...(pollUs === undefined ? {} : { pollUs }),
  });
  if (!r.ok) throw new Error(`bench: ping-pong of ${bytes} bytes failed:\n${r.ranks.map((o) => `rank ${o.rank}: ${o.status} ${o.error?.message ?? ''}`).join('\n')}`);
  return r.ranks[0]!.value as PingPongTimes;
}

/** Median milliseconds of `fn` over `samples` calls after `warmup` calls. */
function timeMs(fn: () => void, warmup: number, samples: number): number {
  for (let i = 0; i < warmup; i++) fn();
  const t: number[] = [];
  for (let i = 0; i < samples; i++) {
    const t0 = performance.now();
    fn();
    t.push(performance.now() - t0);
  }
  t.sort((a, b) => a - b);
  return t[t.length >> 1]!;
}

/** The copy a send makes: a fresh buffer (`slice`), as toTransferable does, in GB/s. */
function sliceGBs(bytes: number): number {
  const src = new Float32Array(bytes / 4).fill(1);
  return bytes / 1e6 / timeMs(() => src.slice(), 3, quick ? 5 : 15);
}

/**
 * The floor for latency: the same four hops (worker -> launcher -> worker and
 * back) with bare postMessage and no runtime, median round trip in µs.
 */
function rawRelayUs(samples: number): Promise<number> {
  const rank = `
    const { parentPort, workerData } = require('node:worker_threads');
    if (workerData.first) {
      const times = []; let t0 = 0;
      parentPort.on('message', () => {
        if (t0) times.push((performance.now() - t0) * 1000);
        if (times.length === workerData.samples) { times.sort((a, b) => a - b); return parentPort.postMessage({ medianUs: times[times.length >> 1] }); }
        t0 = performance.now();
        parentPort.postMessage({ buffer: new ArrayBuffer(4096) });
      });
    } else parentPort.on('message', (m) => parentPort.postMessage(m, [m.buffer]));`;
  const a = new Worker(rank, { eval: true, workerData: { first: true, samples } });
  const b = new Worker(rank, { eval: true, workerData: { first: false } });
  return new Promise((resolve) => {
    a.on('message', (m: { buffer?: ArrayBuffer; medianUs?: number }) => {
      if (m.medianUs === undefined) return b.postMessage(m, [m.buffer!]);
      void a.terminate();
      void b.terminate();
      resolve(m.medianUs);
    });
    b.on('message', (m: { buffer: ArrayBuffer }) => a.postMessage(m, [m.buffer]));
    a.postMessage({});
  });
}

const fmt = (x: number, d = 1) => x.toFixed(d);
const pad = (s: string, n: number) => s.padEnd(n);
const pct = (x: number) => `${fmt(x * 100, 0)}%`;

console.log(`runtime bench · ${new Date().toISOString().slice(0, 10)} · node ${process.version} · ${os.cpus()[0]?.model ?? 'cpu'} × ${os.availableParallelism()} · load ${os.loadavg()[0]!.toFixed(1)} · ${quick ? 'quick' : 'full'}`);
console.log('two ranks on the workers backend; times measured inside rank 0\n');

// A missed target is a finding, printed in the table; like the other benchmarks, this one
// exits non-zero only when a measurement itself failed (a ping-pong that did not complete).
const verdict = (ok: boolean, target: string) => `${target}: ${ok ? 'met' : 'MISSED'}`;

console.log('round-trip latency (rank 0 -> 1 -> 0), beside bare postMessage over the same four hops');
console.log(`  ${pad('size', 8)} ${pad('pollUs', 8)} ${pad('median', 12)} ${pad('p10 .. p90', 20)} ${pad('bare', 10)} ${pad('ratio', 7)} target`);
const bare = await rawRelayUs(quick ? 1000 : 5000);
// Warm-up is long because V8 optimizes the message path only after a few thousand round trips.
const rows: [number, number | undefined][] = [[8, undefined], [4096, undefined], [4096, 0]];
// For `pnpm bench all`: the two rows with targets.
const figures: BenchFigure[] = [];
for (const [bytes, pollUs] of rows) {
  const r = await pingPong(bytes, 5000, quick ? 1000 : 5000, false, false, pollUs);
  if (bytes === 4096 && pollUs === undefined) figures.push({ bench: 'runtime', figure: '4 KiB round trip, 2 worker ranks', unit: 'µs', dtlab: r.medianUs, peer: bare, peerName: 'bare postMessage, same four hops', ratio: r.medianUs / bare, target: '<= 100 µs', met: meets(r.medianUs, '<=', 100) });
  const target = bytes === 4096 && pollUs === undefined ? verdict(r.medianUs <= 100, '<= 100 µs') : '';
  console.log(
    `  ${pad(bytes === 8 ? '8 B' : '4 KiB', 8)} ${pad(String(pollUs ?? `${DEFAULT_POLL_US}`), 8)} ${pad(`${fmt(r.medianUs)} µs`, 12)} ${pad(`${fmt(r.p10Us)} .. ${fmt(r.p90Us)} µs`, 20)} ${pad(`${fmt(bare)} µs`, 10)} ${pad(`${fmt(r.medianUs / bare, 2)}x`, 7)} ${target}`,
  );
}
console.log(`pollUs: how long the launching thread polls for the next message before it sleeps (the default,
  then none). Polling saves the launching thread's two wake-ups per round trip; the ranks still
  sleep and wake, so about two wake-ups remain.`);

console.log('\none-way transfer bandwidth (half a ping-pong round trip, median), beside memcpy timed in rank 0 between round trips');
console.log(`  ${pad('size', 8)} ${pad('recv into', 11)} ${pad('recv new', 11)} ${pad('memcpy', 11)} ${pad('fresh copy', 11)} ${pad('into/memcpy', 12)} ${pad('new/memcpy', 11)} target`);
for (const mib of [1, 16, 64]) {
  const bytes = mib * MiB;
  const samples = quick ? 5 : mib === 64 ? 15 : 30;
  const into = await pingPong(bytes, 3, samples, true, true);
  const fresh = await pingPong(bytes, 3, samples);
  const gbs = (p: PingPongTimes) => bytes / 1e3 / (p.medianUs / 2);
  const mem = bytes / 1e3 / into.memcpyUs!;
  const target = mib === 64 ? verdict(gbs(into) / mem >= 0.4, '>= 40%') : '';
  if (mib === 64) figures.push({ bench: 'runtime', figure: '64 MiB one-way transfer (recv into)', unit: 'GB/s', dtlab: gbs(into), peer: mem, peerName: 'memcpy in rank 0', ratio: gbs(into) / mem, target: '>= 0.40x', met: meets(gbs(into) / mem, '>=', 0.4) });
  console.log(
    `  ${pad(`${mib} MiB`, 8)} ${pad(`${fmt(gbs(into), 2)} GB/s`, 11)} ${pad(`${fmt(gbs(fresh), 2)} GB/s`, 11)} ${pad(`${fmt(mem, 2)} GB/s`, 11)} ${pad(`${fmt(sliceGBs(bytes), 2)} GB/s`, 11)} ${pad(pct(gbs(into) / mem), 12)} ${pad(pct(gbs(fresh) / mem), 11)} ${target}`,
  );
}
console.log(`
recv into: into a preallocated tensor; the send copies into a buffer recycled from an earlier
  recv into, so each message is two copies in memory already mapped.
recv new: a new tensor each time; each send copies into fresh memory (page faults).
fresh copy: Float32Array.prototype.slice (a copy into a new buffer), timed in the launching thread.`);
reportFigures(figures);
