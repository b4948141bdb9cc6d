/**
 * A WorkerPool lends the same rank workers to launch after launch, replaces
 * the ones a launch had to stop, and keeps launches apart.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { launch, WorkerPool } from '../src/index.ts';
import { program } from './support.ts';

describe('a worker pool', () => {
  const pool = new WorkerPool({ memoryLimitMb: 128 });
  afterAll(() => pool.close());

  it('reuses its workers: module state carries over from one launch to the next', async () => {
    const first = await launch({ worldSize: 3, backend: 'workers', program: program('pool', 'count'), pool, output: 'capture' });
    const second = await launch({ worldSize: 3, backend: 'workers', program: program('pool', 'count'), pool, output: 'capture' });
    expect(pool.size).toBe(3);
    expect(first.ranks.map((r) => r.value)).toEqual([1, 1, 1]);
    expect(second.ranks.map((r) => r.value)).toEqual([2, 2, 2]);
    // Each launch gets its own rank's output, end marker stripped.
    expect(second.ranks.map((r) => r.output)).toEqual([0, 1, 2].map((r) => `rank ${r} has seen 2 launch(es)\n`));
  });

  it('lends workers no launch ran on for freshWorkers, which then serve later launches like the rest', async () => {
    const own = new WorkerPool({ memoryLimitMb: 128 });
    try {
      const count = () => launch({ worldSize: 2, backend: 'workers', program: program('pool', 'count'), pool: own, output: 'capture' });
      expect((await count()).ranks.map((r) => r.value)).toEqual([1, 1]);
      const fresh = await launch({ worldSize: 2, backend: 'workers', program: program('pool', 'count'), pool: own, output: 'capture', freshWorkers: true });
      expect(fresh.ranks.map((r) => r.value)).toEqual([1, 1]); // two new workers: their module state starts at 0
      expect(own.size).toBe(4);
      // The next launches take the idle workers in the order they came back: the first two, then the fresh ones.
      expect((await count()).ranks.map((r) => r.value)).toEqual([2, 2]);
      const again = await launch({ worldSize: 2, backend: 'workers', program: program('pool', 'count'), pool: own, output: 'capture', freshWorkers: true });
      expect(again.ranks.map((r) => r.value)).toEqual([1, 1]); // every idle worker has served: two more
      expect(own.size).toBe(6);
    } finally {
      await own.close();
    }
  });

  it('ignores what a previous launch left running: a late send does not reach the next launch', async () => {
    await launch({ worldSize: 2, backend: 'workers', program: program('pool', 'leaveTimer'), pool });
    const next = await launch({ worldSize: 2, backend: 'workers', program: program('pool', 'exchange'), pool });
    await new Promise((r) => setTimeout(r, 100));
    expect(next.ranks.map((r) => r.value)).toEqual([1, 0]);
    expect(next.trace.map((e) => e.count)).toEqual([1, 1]);
  });

  it('replaces a worker it had to stop (a timeout) and carries on', async () => {
    const stuck = await launch({ worldSize: 2, backend: 'workers', program: program('pool', 'spin'), pool, timeoutMs: 500 });
    expect(stuck.ranks.map((r) => r.status)).toEqual(['timeout', 'timeout']);
    const after = await launch({ worldSize: 2, backend: 'workers', program: program('pool', 'exchange'), pool });
    expect(after.ok).toBe(true);
    expect(after.ranks.map((r) => r.value)).toEqual([1, 0]);
  });

  it('warms up workers ahead of a launch', async () => {
    const p = new WorkerPool({ memoryLimitMb: 64 });
    await p.warm(2);
    expect(p.size).toBe(2);
    const r = await launch({ worldSize: 2, backend: 'workers', program: program('pool', 'exchange'), pool: p });
    expect(r.ok).toBe(true);
    expect(p.size).toBe(2);
    await p.close();
  });

  it('lets a launch take workers that warm() is still starting, without starting more', async () => {
    const p = new WorkerPool({ memoryLimitMb: 64 });
    const warming = p.warm(3); // not awaited: the launch below claims two of the three
    const r = await launch({ worldSize: 2, backend: 'workers', program: program('pool', 'exchange'), pool: p });
    expect(r.ok).toBe(true);
    await warming;
    expect(p.size).toBe(3);
    const again = await launch({ worldSize: 3, backend: 'workers', program: program('pool', 'exchange'), pool: p });
    expect(again.ok).toBe(true);
    expect(p.size).toBe(3);
    await p.close();
    expect(p.size).toBe(0);
  });

  it('closes cleanly while warm() is still starting workers', async () => {
    const p = new WorkerPool({ memoryLimitMb: 64 });
    const warming = p.warm(2);
    await p.close();
    await warming;
    expect(p.size).toBe(0);
  });

  it('stops workers that are still starting when it closes, rather than wait for them to come up', async () => {
    // A "bundle" whose loading never ends: these workers would never say they are ready.
    const dir = mkdtempSync(join(tmpdir(), 'dtlab-pool-stuck-'));
    const bundle = join(dir, 'stuck-bundle.cjs');
    writeFileSync(bundle, 'for (;;) {}\n');
    try {
      const p = new WorkerPool({ memoryLimitMb: 64, startupTimeoutMs: 3_600_000, precompiled: { bundle, modules: {} } });
      const warming = p.warm(2);
      // Waiting for the starts (an hour each, three attempts) would outlast the test; close() stops them.
      await p.close();
      await warming;
      expect(p.size).toBe(0);
      await expect(p.acquire(1)).rejects.toThrow(/closed/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('reports workers that cannot start as rank errors, after retrying', async () => {
    const p = new WorkerPool({ memoryLimitMb: 64, startupTimeoutMs: 1, startupAttempts: 2 });
    const r = await launch({ worldSize: 2, backend: 'workers', program: program('pool', 'exchange'), pool: p });
    expect(r.ok).toBe(false);
    expect(r.ranks[0]!.error?.name).toBe('WorkerStartError');
    expect(r.ranks[0]!.error?.message).toMatch(/attempt 1: not ready after 1 ms; attempt 2: not ready after 1 ms/);
    await p.close();
  });
});
