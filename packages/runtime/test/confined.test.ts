/**
 * Untrusted precompiled modules (PrecompiledModules.untrusted), as the
 * grader runs submissions: each runs confined, with a require that loads
 * only the other compiled modules and the allowed packages, a module object
 * that is not Node's, strict code, and a worker without the `process`
 * global, the stack-trace API or the power to start workers. The same
 * program without the confinement reaches all of them, so each check below
 * can fail.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildWorkerBundle, compileModules, launch, WorkerPool, type CompiledModule, type PrecompiledModules } from '../src/index.ts';
import { BUSY_MS, TIMERS_MADE } from './programs/untrusted-stash.ts';

const PROGRAMS = fileURLToPath(new URL('./programs/', import.meta.url));

const here = (rel: string) => fileURLToPath(new URL(rel, import.meta.url));
const PROGRAM = here('./programs/untrusted.ts');
const HELPER = here('./programs/untrusted-helper.ts');
const WALLS = here('./programs/untrusted-walls.ts');
const STASH = here('./programs/untrusted-stash.ts');
const REACH = here('./programs/untrusted-reach.ts');
const LINGER = here('./programs/untrusted-linger.ts');
import type { LingerMode } from './programs/untrusted-linger.ts';
const ALLOW = ['@dtlab/tensor', '@dtlab/runtime'];

let dir: string;
let bundle: string;
let modules: Record<string, CompiledModule>;
const pools: WorkerPool[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'dtlab-confined-'));
  bundle = join(dir, 'bundle.cjs');
  await buildWorkerBundle({ outFile: bundle, packages: ['@dtlab/tensor', '@dtlab/runtime'], resolveDir: here('../') });
  modules = await compileModules([PROGRAM, HELPER, WALLS, STASH, REACH, LINGER]);
});
afterAll(async () => {
  await Promise.all(pools.map((p) => p.close()));
  rmSync(dir, { recursive: true, force: true });
});

async function probe(precompiled: PrecompiledModules): Promise<Record<string, unknown>[]> {
  const pool = new WorkerPool({ memoryLimitMb: 128, precompiled });
  pools.push(pool);
  const r = await launch({ worldSize: 2, backend: 'workers', program: { module: PROGRAM, export: 'probe' }, pool, output: 'capture' });
  expect(r.ok, JSON.stringify(r.ranks.map((o) => o.error?.message))).toBe(true);
  expect(r.ranks.map((o) => o.output)).toEqual(['rank 0 probing\n', 'rank 1 probing\n']);
  return r.ranks.map((o) => o.value as Record<string, unknown>);
}

describe('untrusted precompiled modules', () => {
  it('run confined: no process, no other module, no Module class, no sloppy this, no stack API, no workers', async () => {
    for (const v of await probe({ bundle, modules, untrusted: { allow: ALLOW, root: PROGRAMS } })) {
      expect(v).toEqual({
        channels: 'BroadcastChannel: undefined, MessageChannel: undefined, MessagePort: undefined, fetch: undefined',
        dynamicImport: expect.stringMatching(/^threw: .*untrusted\.ts cannot load 'node:fs'/),
        launch: 'threw: this thread runs untrusted code (a submission), so it cannot launch ranks',
        compile: 'threw: this thread runs untrusted code (a submission), so it cannot compile code',
        requireData: expect.stringMatching(/^threw: .*cannot load '\.\/untrusted-data\.json'/),
        process: 'undefined',
        requireFs: expect.stringMatching(/^threw: .*untrusted\.ts cannot load 'node:fs': a submission may load only its own src\/ files and @dtlab\/tensor, @dtlab\/runtime$/),
        requireNotCompiled: expect.stringMatching(/^threw: .*cannot load '\.\/untrusted-outside\.ts'/),
        requireHelper: 'ok: object',
        moduleClass: 'undefined',
        sloppyThis: 'undefined',
        stackApi: expect.stringMatching(/^threw: Cannot assign to read only property 'prepareStackTrace'/),
        workers: 'threw: this thread runs untrusted code (a submission), so it cannot start worker threads',
        tensor: 6,
        helper: 6,
      });
    }
  });

  it('run each launch on workers that never ran them before, unless reuseWorkers', async () => {
    const counts = async (reuseWorkers: boolean) => {
      const pool = new WorkerPool({ memoryLimitMb: 128, precompiled: { bundle, modules, untrusted: { allow: ALLOW, root: PROGRAMS, reuseWorkers } } });
      pools.push(pool);
      expect(pool.lendsOnce).toBe(!reuseWorkers);
      const out: unknown[] = [];
      for (let i = 0; i < 3; i++) {
        const r = await launch({ worldSize: 2, backend: 'workers', program: { module: PROGRAM, export: 'callsInThisWorker' }, pool });
        out.push(r.ranks.map((o) => o.value));
      }
      return out;
    };
    expect(await counts(false)).toEqual([[1, 1], [1, 1], [1, 1]]);
    expect(await counts(true)).toEqual([[1, 1], [1, 1], [1, 1]]); // the same workers, each launch loading the module afresh
  });

  it('start replacements for the workers a launch used, ahead of the next launch, until stopWarming', async () => {
    // The pool's size after `ms` of waiting, or as soon as it reaches `want`.
    const sizeWithin = async (pool: WorkerPool, want: number, ms: number) => {
      for (const end = Date.now() + ms; pool.size !== want && Date.now() < end; ) await new Promise((r) => setTimeout(r, 20));
      return pool.size;
    };
    const pool = new WorkerPool({ memoryLimitMb: 128, precompiled: { bundle, modules, untrusted: { allow: ALLOW, root: PROGRAMS } } });
    pools.push(pool);
    const once = () => launch({ worldSize: 2, backend: 'workers', program: { module: PROGRAM, export: 'callsInThisWorker' }, pool });
    expect((await once()).ok).toBe(true);
    expect(await sizeWithin(pool, 2, 10_000)).toBe(2); // two fresh ones, never lent, wait for the next launch
    pool.stopWarming();
    const r = await once(); // takes those two; starts none in their place
    expect(r.ranks.map((o) => o.value)).toEqual([1, 1]);
    expect(await sizeWithin(pool, 1, 1500)).toBe(0); // none came up in a second and a half
    expect((await once()).ranks.map((o) => o.value)).toEqual([1, 1]); // and starts fresh ones when a launch needs them
  });

  it('serve launch after launch on the same workers, each loading the modules afresh', async () => {
    const pool = new WorkerPool({ memoryLimitMb: 128, precompiled: { bundle, modules, untrusted: { allow: ALLOW, root: PROGRAMS, reuseWorkers: true } } });
    pools.push(pool);
    const out: unknown[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await launch({ worldSize: 2, backend: 'workers', program: { module: PROGRAM, export: 'callsInThisWorker' }, pool });
      out.push(r.ranks.map((o) => o.value));
    }
    expect(out).toEqual([[1, 1], [1, 1], [1, 1]]);
    expect(pool.size).toBe(2); // no thread started after the first two
    expect(pool.launchesRunAgain).toBe(0); // no code of one launch ran in the next
    // Trusted modules stay loaded between launches: the module's count goes on.
    const trusted = new WorkerPool({ memoryLimitMb: 128, precompiled: { bundle, modules } });
    pools.push(trusted);
    const counts: unknown[] = [];
    for (let i = 0; i < 3; i++) counts.push((await launch({ worldSize: 2, backend: 'workers', program: { module: PROGRAM, export: 'callsInThisWorker' }, pool: trusted })).ranks.map((o) => o.value));
    expect(counts).toEqual([[1, 1], [2, 2], [3, 3]]);
  });

  it('leave the next launch on the same worker nothing of the last one', async () => {
    const twice = async (precompiled: PrecompiledModules) => {
      const pool = new WorkerPool({ memoryLimitMb: 128, precompiled });
      pools.push(pool);
      const first = await launch({ worldSize: 2, backend: 'workers', program: { module: STASH, export: 'stash' }, pool, output: 'capture' });
      expect(first.ok, JSON.stringify(first.ranks.map((o) => o.error?.stack))).toBe(true);
      const second = await launch({ worldSize: 2, backend: 'workers', program: { module: STASH, export: 'recover' }, pool, output: 'capture' });
      expect(second.ok, JSON.stringify(second.ranks.map((o) => o.error?.stack))).toBe(true);
      expect(pool.size).toBe(2); // the same two workers served both
      const seen = second.ranks.map((o) => o.value as { found: unknown; clock: number; idle: number | undefined; timerNumber: number });
      return { stashed: first.ranks[0]!.value as Record<string, string>, found: seen.map((v) => v.found), clocks: seen.map((v) => v.clock), idle: seen.map((v) => v.idle), timerNumbers: seen.map((v) => v.timerNumber), output: second.ranks.map((o) => o.output) };
    };
    const confined = await twice({ bundle, modules, untrusted: { allow: ALLOW, root: PROGRAMS, reuseWorkers: true } });
    // What the first launch could not even write...
    expect(confined.stashed).toMatchObject({ listener: expect.stringMatching(/^threw: performance.addEventListener is not available to a rank/), mark: expect.stringMatching(/^threw: performance.mark is not available/), module: 'ok', global: expect.stringMatching(/^threw: .*not extensible/), timeout: expect.stringMatching(/^threw: /), immediate: expect.stringMatching(/^threw: /), searchParamsIterator: expect.stringMatching(/^threw: /), tensor: expect.stringMatching(/^threw: /) });
    expect(confined.stashed).not.toHaveProperty('nodeTiming');
    expect(confined.stashed).toMatchObject({ timerNumbers: 'ok', realTimer: expect.stringMatching(/^threw: /) });
    // ...and what it wrote (its module state, a regex match, a mark, a pooled buffer, timers) the next launch does not find.
    expect(confined.found).toEqual([{}, {}]);
    // Its clock starts with the launch: not after the BUSY_MS the first launch kept the thread running, nor
    // with the time the thread sat idle (which Node's performance.nodeTiming.idleTime adds up).
    for (const clock of confined.clocks) expect(clock).toBeLessThan(BUSY_MS);
    expect(confined.idle).toEqual([undefined, undefined]);
    // Its timers count from 1 again, whatever number of them the first launch made.
    for (const n of confined.timerNumbers) expect(n).toBeLessThan(TIMERS_MADE);
    // Nor do the earlier launch's timers run in it, and the console counts afresh.
    expect(confined.output).toEqual(['launches: 1\n', 'launches: 1\n']);
    // Without the confinement, the secret carries over.
    const open = await twice({ bundle, modules });
    expect(open.found[0]).toMatchObject({ module: expect.any(String), global: expect.any(String), timeout: expect.any(String) });
    expect(open.output[0]).toMatch(/launches: 2\n[^]*of an earlier launch/);
    for (const clock of open.clocks) expect(clock).toBeGreaterThan(BUSY_MS);
    for (const n of open.timerNumbers) expect(n).toBeGreaterThan(TIMERS_MADE);
  });

  it("run none of a launch's code in the next: what a host calls back is kept to its launch, and a launch a promise loop ran into is run again", async () => {
    const twice = async (precompiled: PrecompiledModules, mode: LingerMode, gapMs = 0) => {
      const pool = new WorkerPool({ memoryLimitMb: 128, precompiled });
      pools.push(pool);
      const first = await launch({ worldSize: 2, backend: 'workers', program: { module: LINGER, export: 'linger' }, args: [mode], pool, output: 'capture' });
      expect(first.ok, JSON.stringify(first.ranks.map((o) => o.error?.stack))).toBe(true);
      if (gapMs > 0) await new Promise((r) => setTimeout(r, gapMs));
      const second = await launch({ worldSize: 2, backend: 'workers', program: { module: LINGER, export: 'look' }, pool, output: 'capture' });
      expect(second.ok, JSON.stringify(second.ranks.map((o) => o.error?.stack))).toBe(true);
      const value = first.ranks[0]!.value as string[] | { started: string[] };
      return { started: Array.isArray(value) ? value : value.started, values: second.ranks.map((o) => o.value), output: second.ranks.map((o) => o.output), runAgain: pool.launchesRunAgain, size: pool.size };
    };
    const reuse = { bundle, modules, untrusted: { allow: ALLOW, root: PROGRAMS, reuseWorkers: true } };
    // A finalization callback and a timeout signal run nothing in the next launch, which is not run again.
    const quiet = await twice(reuse, 'quiet');
    expect(quiet).toEqual({ started: ['finalization', 'timeout signal'], values: [0, 1], output: ['', ''], runAgain: 0, size: 2 });
    // A loop of promises the host settles runs on into the next launch, where it is caught: that launch runs
    // again on two fresh workers, and what the loop printed there is gone with the first run.
    const loud = await twice(reuse, 'promises');
    expect(loud).toMatchObject({ started: ['wasm loop', 'waitAsync', 'finalization', 'timeout signal'], values: [0, 1], output: ['', ''], runAgain: 1 });
    expect(loud.size).toBe(2); // the four workers that ran the first launches are gone
    // So does a loop of WebAssembly start functions: instantiating runs them in a reaction of the launch's promise.
    const start = await twice(reuse, 'start');
    expect(start).toMatchObject({ started: ['start loop', 'finalization', 'timeout signal'], values: [0, 1], output: ['', ''], runAgain: 1 });
    // And code the runtime runs itself as it sends the result (a getter of it) runs within the launch: what it
    // leaves to run after is caught, and the next launch, which it would print into, runs again.
    expect(await twice(reuse, 'late')).toMatchObject({ started: ['late getter'], values: [0, 1], output: ['', ''], runAgain: 1 });
    // A compile left to fail once the launch is over ends the thread while it sits idle: the pool lets it go
    // (the launching thread carries on), and the next launch runs on a fresh worker.
    expect(await twice(reuse, 'reject', 1500)).toMatchObject({ started: ['failing compile', 'finalization', 'timeout signal'], values: [0, 1], output: ['', ''] });
    // Without the confinement, all of it runs in the next launch.
    for (const mode of ['promises', 'start'] as const) {
      const open = await twice({ bundle, modules }, mode);
      for (const [rank, output] of open.output.entries()) {
        expect(output).toContain(mode === 'start' ? `rank ${rank}: a start function of an earlier launch is still running` : `rank ${rank}: a promise loop of an earlier launch is still running`);
        expect(output).toContain(`rank ${rank}: a timeout signal of an earlier launch aborted`);
      }
      expect(open.runAgain).toBe(0);
    }
  });

  it('leave nothing mutable within reach that two launches could share', async () => {
    const pool = new WorkerPool({ memoryLimitMb: 128, precompiled: { bundle, modules, untrusted: { allow: ALLOW, root: PROGRAMS } } });
    pools.push(pool);
    const r = await launch({ worldSize: 1, backend: 'workers', program: { module: REACH, export: 'mutableReach' }, pool });
    expect(r.ok, JSON.stringify(r.ranks.map((o) => o.error?.stack))).toBe(true);
    expect(r.ranks[0]!.value).toEqual([]);
    // The same walk in a worker that is not confined finds plenty: the walk can tell.
    const open = new WorkerPool({ memoryLimitMb: 128, precompiled: { bundle, modules } });
    pools.push(open);
    const o = await launch({ worldSize: 1, backend: 'workers', program: { module: REACH, export: 'mutableReach' }, pool: open });
    expect((o.ranks[0]!.value as string[]).length).toBeGreaterThan(10);
  });

  it('cannot change what the course code in their thread calls, reach its stdio port or see its frames', async () => {
    const walls = async (precompiled: PrecompiledModules) => {
      const pool = new WorkerPool({ memoryLimitMb: 128, precompiled });
      pools.push(pool);
      const r = await launch({ worldSize: 1, backend: 'workers', program: { module: WALLS, export: 'walls' }, pool, output: 'capture' });
      expect(r.ok, JSON.stringify(r.ranks.map((o) => o.error?.stack))).toBe(true);
      return r.ranks[0]!.value as Record<string, unknown>;
    };
    const confined = await walls({ bundle, modules, untrusted: { allow: ALLOW, root: PROGRAMS } });
    expect(confined).toEqual({
      commPrototype: 'refused',
      workPrototype: 'refused',
      commInstance: 'refused',
      tensorPrototype: 'refused',
      storagePrototype: 'refused',
      objectPrototype: 'changed', // reading is fine
      objectPrototypeAssign: 'refused',
      objectPrototypeAdd: 'refused',
      errorPrototype: 'refused',
      typeErrorPrototype: 'refused',
      performance: 'refused',
      bufferPrototype: 'refused',
      ownOverride: 'own',
      errorOverride: 'assigned',
      timerSymbols: [],
      promiseSymbols: [],
      customInspect: 'never called',
      bufferInspect: 'util.inspect, frozen with its options, colours and styles',
      stdioPort: [],
      // The submission's own frame, relative to its folder and source-mapped; the course's frames are one line.
      stack: expect.arrayContaining([expect.stringMatching(/^    at walls \(untrusted-walls\.ts:\d+:\d+\)$/)]),
      sum: 12,
    });
    // Nothing else: the course's frames are at most '(course code)'.
    for (const line of confined.stack as string[]) expect(line).toMatch(/^    at (walls \(untrusted-walls\.ts:\d+:\d+\)|\(course code\))$/);
    const open = await walls({ bundle, modules });
    expect(open).toMatchObject({ commPrototype: 'changed', tensorPrototype: 'changed', objectPrototypeAssign: 'changed', errorPrototype: 'changed', stdioPort: ['Symbol(kPort)'] });
    // Node's own timers carry the thread's async ids (a rank's context is not on them any more, in either mode).
    expect(open.timerSymbols).toEqual(expect.arrayContaining(['Symbol(asyncId)']));
    expect(open.promiseSymbols).toEqual([]);
    expect(open.customInspect).toBe('util.inspect, not frozen');
    expect(open.bufferInspect).toBe('util.inspect, not frozen');
    expect((open.stack as string[]).join('\n')).toContain(WALLS);
  });

  it('are not confined without `untrusted`: the same probes reach the host', async () => {
    for (const v of await probe({ bundle, modules })) {
      expect(v).toMatchObject({
        channels: 'BroadcastChannel: function, MessageChannel: function, MessagePort: function, fetch: function',
        dynamicImport: 'ok: object',
        launch: 'ok: object',
        compile: 'ok: object',
        requireData: 'ok: object',
        process: 'object',
        requireFs: 'ok: object',
        requireNotCompiled: 'ok: object',
        moduleClass: 'function',
        stackApi: 'ok: string',
        workers: 'ok: object',
        tensor: 6,
        helper: 6,
      });
    }
  });
});
