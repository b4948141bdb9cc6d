/**
 * Device memory through launch: every place a rank can keep a buffer is
 * counted (the hiding places that fooled retainedBytes included), marks
 * made with the launch's key are told apart from others, an allocation past
 * the capacity fails with an OutOfMemoryError in CUDA's shape, and the same
 * program gives the same figures in every run.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { launch, OutOfMemoryError, WorkerPool, type DeviceSpec, type LaunchResult, type MemoryMark } from '../src/index.ts';
import { BACKENDS, program } from './support.ts';
import type { HidingPlace } from './programs/device-memory.ts';

const KEY = randomUUID();
const DEVICE: DeviceSpec = { name: 'test-gpu', flops: 1e12, memoryBytes: 16 * 2 ** 20, memoryBandwidth: 1e12 };
const pool = new WorkerPool();
afterAll(() => pool.close());

const run = (backend: (typeof BACKENDS)[number], name: string, args: unknown[], extra: object = {}) =>
  launch({ worldSize: 2, backend, program: program('device-memory', name), args, device: DEVICE, markKey: KEY, timeoutMs: 30_000, ...(backend === 'workers' ? { pool } : {}), ...extra });

function ok(r: LaunchResult): LaunchResult {
  expect(r.ok, JSON.stringify(r.ranks.map((o) => o.error?.message))).toBe(true);
  return r;
}

const PLACES: HidingPlace[] = [
  'a tensor field',
  'a WeakMap',
  'a #private field',
  'a non-enumerable property',
  'a closure',
  'module state',
  'a Map of tensors',
  'new Float32Array(n)',
  '.slice()',
  'Float32Array.from',
  'structuredClone',
  'new ArrayBuffer',
  'Buffer.alloc',
  'a tensor saved for backward',
  'a received message',
];
const N = 10_000;
const TRAIN_FIGURES = new Map<string, unknown>();

describe.each(BACKENDS)('on the %s backend', (backend) => {
  it.each(PLACES)('a buffer kept in %s is counted, to the byte', async (where) => {
    // The same program keeping an empty buffer: what differs is exactly the buffer's 4·N bytes.
    const base = ok(await run(backend, 'keepAndMark', [where, 0, KEY]));
    const kept = ok(await run(backend, 'keepAndMark', [where, N, KEY]));
    const inUse = (r: LaunchResult) => (r.ranks[0]!.value as MemoryMark).inUseBytes;
    expect(inUse(kept) - inUse(base)).toBe(4 * N);
    expect(kept.device!.ranks[0]!.memory.marks).toEqual([kept.ranks[0]!.value]);
  });

  it('marks made with the launch key are trusted; others are recorded, but not trusted', async () => {
    const r = ok(await run(backend, 'twoMarks', [KEY]));
    expect(r.device!.ranks[0]!.memory.marks.map((m) => [m.label, m.trusted])).toEqual([
      ['the check', false],
      ['the check', true],
      ['a guess', false],
    ]);
  });

  it("past the capacity: OutOfMemoryError in CUDA's shape, with the allocation's fields", async () => {
    // zeros([10, n]) of float32 with n = 5·2^20 / 10 · ... : 20 MiB on a 16 MiB device.
    const r = await run(backend, 'tooBig', [524_288]);
    for (const o of r.ranks) {
      expect(o.status).toBe('error');
      expect(o.error).toBeInstanceOf(OutOfMemoryError);
      const err = o.error as OutOfMemoryError;
      expect(err.kind).toBe('device');
      expect(err.allocation).toEqual({ device: 'test-gpu', label: 'full', shape: [10, 524_288], dtype: 'float32', requestedBytes: 20 * 2 ** 20, inUseBytes: 40, capacityBytes: 16 * 2 ** 20 });
      expect(err.message).toBe(
        `rank ${o.rank}: device out of memory. Tried to allocate 20.00 MiB for full [10, 524288] float32 (device 'test-gpu' of rank ${o.rank}; 16.00 MiB total capacity; 0.00 MiB already in use; 16.00 MiB free). ` +
          'Keep fewer tensors alive (drop references you no longer need, set .grad to null), shard them across ranks, or use a device with more memory.',
      );
    }
    expect(r.device!.ranks.map((d) => d.memory.refused)).toEqual([1, 1]);
  });

  it('gives the same figures in every run: memory at every mark, peak, time and FLOPs', async () => {
    const runs: LaunchResult[] = [];
    for (let i = 0; i < 3; i++) runs.push(ok(await run(backend, 'train', [4, KEY])));
    const figures = (r: LaunchResult) => r.device!.ranks.map((d) => ({ marks: d.memory.marks, peak: d.memory.peakBytes, inUse: d.memory.inUseBytes, vt: d.vtUs, flops: d.flops, loss: r.ranks[d.rank]!.value }));
    expect(figures(runs[1]!)).toEqual(figures(runs[0]!));
    expect(figures(runs[2]!)).toEqual(figures(runs[0]!));
    // And the same on both backends (the test process runs with the V8 flags of src/device/collect.ts).
    for (const other of TRAIN_FIGURES.values()) expect(figures(runs[0]!)).toEqual(other);
    TRAIN_FIGURES.set(backend, figures(runs[0]!));
    // The model is the same after every step, so what is in use after each step is too (Adam's moments appear after the first).
    const marks = runs[0]!.device!.ranks[0]!.memory.marks;
    expect(marks.slice(1).map((m) => m.inUseBytes)).toEqual(marks.slice(1).map(() => marks[1]!.inUseBytes));
  }, 120_000);
}, 120_000);

it('a module that allocates when it loads on a worker has that memory counted (it loaded in the rank)', async () => {
  const r = ok(await launch({ worldSize: 1, backend: 'workers', program: program('device-module-state', 'main'), args: [KEY], device: DEVICE, markKey: KEY, timeoutMs: 30_000 }));
  expect((r.ranks[0]!.value as { mark: MemoryMark }).mark.inUseBytes).toBe(100_000);
}, 60_000);

describe("memoryPoints 'marks': collections at the marks only", () => {
  const train = (memoryPoints?: 'marks') =>
    launch({ worldSize: 3, backend: 'workers', program: program('device-memory', 'train'), args: [4, KEY, 1024], device: DEVICE, markKey: KEY, timeoutMs: 30_000, pool, ...(memoryPoints ? { memoryPoints } : {}) }).then(ok);

  // A hidden layer of 1024: each delivery's gradient (80 KiB) is past the automatic points' 64 KiB.
  it('gives the same bytes at every mark as automatic points, with fewer collections and a peak no lower', async () => {
    const auto = await train();
    const marks = await train('marks');
    for (const [a, m] of auto.device!.ranks.map((d, r) => [d.memory, marks.device!.ranks[r]!.memory] as const)) {
      expect(m.marks.map((x) => [x.label, x.inUseBytes])).toEqual(a.marks.map((x) => [x.label, x.inUseBytes]));
      expect(m.inUseBytes).toBe(a.inUseBytes);
      // Each of the 4 marks collects, and so does the program's end (and the modules' load): nothing else.
      expect(m.collections).toBeLessThanOrEqual(m.marks.length + 2);
      expect(m.collections).toBeLessThan(a.collections);
      // The peak counts everything allocated since the last collection: an upper bound, looser with fewer.
      expect(m.peakBytes).toBeGreaterThanOrEqual(a.peakBytes);
    }
    expect(marks.ranks.map((o) => o.value)).toEqual(auto.ranks.map((o) => o.value));
  }, 60_000);

  it('is refused with a peakTolerance (which needs the collections it drops) or without a device', async () => {
    const spec = { worldSize: 1, backend: 'workers' as const, program: program('device-memory', 'twoMarks'), args: [KEY], pool };
    await expect(launch({ ...spec, device: DEVICE, memoryPoints: 'marks', peakTolerance: 0.1 })).rejects.toThrow("launch: memoryPoints 'marks' collects at marks only, which a peakTolerance cannot keep: pass one of the two");
    await expect(launch({ ...spec, memoryPoints: 'marks' })).rejects.toThrow("launch: memoryPoints needs a device: add device: 'course' (or another preset or spec)");
    await expect(launch({ ...spec, device: DEVICE, memoryPoints: 'never' as 'marks' })).rejects.toThrow(`launch: memoryPoints must be 'auto' or 'marks', got "never"`);
  });
});

describe('peakTolerance: a peak close enough to tell what lived when', () => {
  const grads = (mode: string, peakTolerance?: number) =>
    launch({ worldSize: 2, backend: 'workers', program: program('device-memory', 'gradients'), args: [mode, 8, 25_000], device: DEVICE, ...(peakTolerance ? { peakTolerance } : {}), timeoutMs: 30_000, pool }).then(ok);

  it('tells gradients freed as they are reduced from gradients kept to the end, in every run', async () => {
    const full = 4 * 25_000;
    const gradPeak = (r: LaunchResult) => r.device!.ranks.map((d) => d.memory.peakByLabel.grad ?? 0);
    // Without collections before new peaks, nothing is found freed before the end: both look the same.
    expect(gradPeak(await grads('drop'))).toEqual([8 * full, 8 * full]);
    expect(gradPeak(await grads('keep'))).toEqual([8 * full, 8 * full]);
    // With them, within 10%: one or two full gradients at a time, against all eight.
    const drop = await grads('drop', 0.1);
    for (const g of gradPeak(drop)) expect(g).toBeLessThanOrEqual(2 * full * 1.1);
    expect(gradPeak(await grads('keep', 0.1))).toEqual([8 * full, 8 * full]);
    expect(gradPeak(await grads('drop', 0.1))).toEqual(gradPeak(drop));
  }, 120_000);
});
