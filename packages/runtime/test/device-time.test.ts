/**
 * Virtual time on the virtual device, against closed forms worked out by
 * hand: compute alone (the roofline), communication alone (the alpha-beta
 * times of the clock without a device), a send overlapped with a matmul, a
 * blocking one, a two-stage pipeline, and modelled work. On both backends,
 * with the same figures on each.
 */
import { describe, expect, it } from 'vitest';
import { randn, zeros } from '@dtlab/tensor';
import { launch, type DeviceSpec, type LaunchResult } from '../src/index.ts';
import { BACKENDS, program } from './support.ts';

// 100 FLOP per µs (1e8 FLOP/s) in both dtypes; memory fast enough that matmuls here are compute-bound.
const DEVICE: DeviceSpec = { name: 'toy', flops: 1e8, memoryBytes: 1e9, memoryBandwidth: 1e15 };
const cost = { alphaUs: 10, bytesPerUs: 100 };
const mm = (m: number, k: number, n: number) => (2 * m * n * k) / 100; // µs of one [m,k]·[k,n] on DEVICE

const run = (backend: (typeof BACKENDS)[number], worldSize: number, name: string, args: unknown[], device: DeviceSpec | undefined = DEVICE) =>
  launch({ worldSize, backend, program: program('device-time', name), args, cost, ...(device ? { device } : {}), timeoutMs: 30_000 });

function values(r: LaunchResult): unknown[] {
  expect(r.ok, JSON.stringify(r.ranks.map((o) => o.error?.message))).toBe(true);
  return r.ranks.map((o) => o.value);
}

describe.each(BACKENDS)('virtual time on the %s backend', (backend) => {
  it('compute only: a matmul takes 2·m·n·k / peak FLOP/s; a big add takes its bytes / bandwidth', async () => {
    const a = randn([8, 16], { seed: 1 });
    const b = randn([16, 4], { seed: 2 });
    const r = await run(backend, 2, 'matmulOnce', [a, b]);
    expect(values(r)).toEqual([mm(8, 16, 4), mm(8, 16, 4)]);
    expect(r.device!.ranks.map((d) => [d.computeUs, d.flops, d.exposedCommUs, d.idleUs])).toEqual([
      [mm(8, 16, 4), 2 * 8 * 4 * 16, 0, 0],
      [mm(8, 16, 4), 2 * 8 * 4 * 16, 0, 0],
    ]);
    expect(r.stats.map((s) => s.vtUs)).toEqual([mm(8, 16, 4), mm(8, 16, 4)]);
    // Memory-bound: 1000 elements read twice and written once, 12000 bytes at 100 bytes/µs.
    const slow: DeviceSpec = { ...DEVICE, memoryBandwidth: 1e8 };
    const r2 = await run(backend, 1, 'addOnce', [zeros([1000])], slow);
    expect(values(r2)).toEqual([12_000 / 100]);
  });

  it('communication only: the alpha-beta times of the clock without a device, N·(α + S/β) for a ring', async () => {
    const chunk = zeros([200]); // 800 bytes: 10 + 800/100 = 18 µs a step
    const withDevice = await run(backend, 4, 'ring', [chunk]);
    const without = await run(backend, 4, 'ring', [chunk], undefined);
    expect(values(withDevice)).toEqual([72, 72, 72, 72]);
    expect(values(without)).toEqual([72, 72, 72, 72]);
    const times = (r: LaunchResult) => r.trace.map((e) => [e.src, e.vtStartUs, e.vtEndUs]).sort((x, y) => x[0]! - y[0]! || x[1]! - y[1]!);
    expect(times(withDevice)).toEqual(times(without));
    expect(withDevice.device!.ranks[0]).toMatchObject({ computeUs: 0, exposedCommUs: 72, idleUs: 0, commUs: 72 });
  });

  it('an isend posted before a matmul overlaps with it; a blocking recv before the matmul does not', async () => {
    // x is 400 bytes: it arrives at 10 + 400/100 = 14 µs. The matmul takes 2·10·20·10/100 = 40 µs.
    const x = zeros([100]);
    const a = randn([10, 20], { seed: 1 });
    const b = randn([20, 10], { seed: 2 });
    const overlap = await run(backend, 2, 'sendBesideMatmul', ['overlap', x, a, b]);
    expect(values(overlap)).toEqual([40, 40]);
    expect(overlap.device!.ranks[1]).toMatchObject({ computeUs: 40, exposedCommUs: 0, idleUs: 0 });
    const blocking = await run(backend, 2, 'sendBesideMatmul', ['blocking', x, a, b]);
    expect(values(blocking)).toEqual([40, 14 + 40]);
    expect(blocking.device!.ranks[1]).toMatchObject({ computeUs: 40, exposedCommUs: 14, idleUs: 0 });
    // A message that takes longer than the matmul is exposed for the difference: 10 + 8000/100 = 90 µs.
    const big = await run(backend, 2, 'sendBesideMatmul', ['overlap', zeros([2000]), a, b]);
    expect(values(big)).toEqual([40, 90]);
    expect(big.device!.ranks[1]).toMatchObject({ exposedCommUs: 50 });
  });

  it('a receive on a background stream overlaps with the main stream and is joined by waitAll', async () => {
    const a = randn([10, 20], { seed: 1 });
    const b = randn([20, 10], { seed: 2 });
    const r = await run(backend, 2, 'backgroundRecv', [zeros([2000]), a, b]);
    expect(values(r)).toEqual([0, 90]);
    const rank1 = r.device!.ranks[1]!;
    expect(rank1).toMatchObject({ vtUs: 90, computeUs: 40, exposedCommUs: 50 });
    expect(rank1.streams.map((s) => [s.label, s.endUs])).toEqual([
      ['main', 90],
      ['recv', 90],
    ]);
  });

  it('a two-stage pipeline: the second stage idles until the first activation leaves, then computes back to back', async () => {
    // Stage A: [4,8]·[8,8] = 5.12 µs; stage B: [4,8]·[8,16] = 10.24 µs; an activation is 128 bytes: 10 + 1.28 µs on the wire.
    const m = 4;
    const xs = Array.from({ length: m }, (_, i) => randn([4, 8], { seed: i }));
    const r = await run(backend, 2, 'pipeline', [xs, randn([8, 8], { seed: 9 }), randn([8, 16], { seed: 10 })]);
    const [ta, tb, wire] = [mm(4, 8, 8), mm(4, 8, 16), 10 + 128 / 100];
    const [v0, v1] = values(r) as [number, number];
    expect(v0).toBeCloseTo(m * ta, 9);
    expect(v1).toBeCloseTo(ta + wire + m * tb, 9);
    expect(r.trace.map((e) => e.vtStartUs)).toEqual(r.trace.map((_, i) => expect.closeTo((i + 1) * ta, 9)));
    const d = r.device!.ranks[1]!;
    expect(d.idleUs).toBeCloseTo(ta, 9); // waiting before the first activation left stage A
    expect(d.exposedCommUs).toBeCloseTo(wire, 9); // then for it to arrive
    expect(d.computeUs).toBeCloseTo(m * tb, 9);
    expect(d.computeUs + d.elapsedUs + d.exposedCommUs + d.idleUs).toBeCloseTo(d.vtUs, 9);
  });

  it('comm.elapse charges modelled work, and refuses what is not a finite time', async () => {
    const r = await run(backend, 1, 'elapse', [125]);
    const [{ vt, refused }] = values(r) as [{ vt: number; refused: string[] }];
    expect(vt).toBe(125);
    expect(refused).toEqual([
      'rank 0: elapse: us must be a finite number of microseconds >= 0, got number -1',
      'rank 0: elapse: us must be a finite number of microseconds >= 0, got number NaN',
      'rank 0: elapse: us must be a finite number of microseconds >= 0, got number Infinity',
      'rank 0: elapse: us must be a finite number of microseconds >= 0, got string 3',
    ]);
    expect(r.device!.ranks[0]!.ops).toContainEqual({ kind: 'elapse: load batch', calls: 1, flops: 0, bytes: 0, computeUs: 125 });
    expect(r.device!.ranks[0]).toMatchObject({ elapsedUs: 125, computeUs: 0 });
  });
}, 60_000);

it('gives the same figures on both backends', async () => {
  const args = [Array.from({ length: 3 }, (_, i) => randn([4, 8], { seed: i })), randn([8, 8], { seed: 9 }), randn([8, 16], { seed: 10 })];
  const [inline, workers] = await Promise.all(BACKENDS.map((b) => run(b, 2, 'pipeline', args)));
  const strip = (r: LaunchResult) => r.device!.ranks.map(({ memory, ...rest }) => ({ ...rest, peak: memory.peakBytes, inUse: memory.inUseBytes }));
  expect(strip(workers)).toEqual(strip(inline));
  const messages = (r: LaunchResult) => r.trace.map(({ seq: _s, ...e }) => e).sort((x, y) => x.src - y.src || x.vtStartUs - y.vtStartUs);
  expect(messages(workers)).toEqual(messages(inline));
}, 60_000);
