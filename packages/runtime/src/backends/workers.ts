/**
 * The workers backend: one worker thread per rank. Each rank has its own
 * module instances and heap, so ranks can talk only through Comm, and a rank
 * stuck in a synchronous loop can be stopped (its worker is terminated).
 *
 * Rank programs are modules on disk (.ts or .js); workers load TypeScript
 * through tsx, or compiled ahead (see loading/precompile.ts). Every message goes
 * through the fabric in this thread.
 *
 * Waking a sleeping thread costs about 30 µs on a virtual machine, and a
 * message from rank to rank wakes this thread and then the receiver. So after
 * handling a message this thread may keep polling the ranks' ports for
 * `pollUs` before it goes back to sleep: a message that comes within that
 * window costs no wake-up here, which takes a small round trip from four
 * wake-ups to two. It does so only while a core is free for it (fewer ranks
 * compute than there are cores) and while polling has paid lately (see
 * poll.ts). Polling stops after POLL_SLICE_MS at a stretch, so that timers
 * and rank output are never held up for long.
 *
 * Workers come from a WorkerPool: the launch's own (fresh workers, closed
 * afterwards) or one the caller passes to reuse workers across launches.
 */
import { resolve } from 'node:path';
import { receiveMessageOnPort } from 'node:worker_threads';
import { OutOfMemoryError } from '../errors.ts';
import { CORES, DEFAULT_POLL_US, POLL_SLICE_MS, PollCost, TRAILING_MS, WAKE_GAP_MS } from './poll.ts';
import { RankOutput } from './output.ts';
import { WorkerPool, type RankWorker } from './pool.ts';
import { ThreadLaunch, type ThreadLaunchSpec } from './thread-launch.ts';
import type { FromRank } from './protocol.ts';
import type { LaunchResult, ProgramRef } from '../types.ts';
import type { DeviceModel } from '@dtlab/tensor/meter';

const RSS_POLL_MS = 100;
// What a rank worker costs before its program allocates anything (a V8
// isolate, tsx, the tensor library): about 30 MB measured, allowed twice over.
const WORKER_OVERHEAD_MB = 64;

type Spec = ThreadLaunchSpec & { memoryLimitMb: number; pool?: WorkerPool | undefined };

/**
 * Runs the program module on `spec.worldSize` worker threads, each with
 * `device` (or none).
 *
 * A launch during which some rank's thread ran code of an earlier launch (a
 * confined worker that serves launch after launch catches it: see
 * precompiled-loader.cjs, watchStrays) is run again, on workers that never
 * ran anything, and the first run's result is dropped: what it computed
 * could have been set by that code. Its workers are not lent again.
 */
export async function runWorkers(spec: Spec, program: ProgramRef, device: DeviceModel | null = null): Promise<LaunchResult> {
  const started = Date.now();
  const pool = spec.pool ?? new WorkerPool({ memoryLimitMb: spec.memoryLimitMb });
  let workers: RankWorker[];
  try {
    workers = await pool.acquire(spec.worldSize, spec.freshWorkers === true);
  } catch (e) {
    if (spec.pool === undefined) await pool.close();
    const error = e as Error;
    const ranks = Array.from({ length: spec.worldSize }, (_, rank) => ({ rank, status: 'error' as const, error }));
    return { ranks, trace: [], stats: [], wallMs: Date.now() - started, ok: false };
  }
  const run = new WorkersLaunch(spec, device, pool, workers);
  run.listen();
  run.start(program);
  const watch = run.watchMemory();
  const timer = setTimeout(() => run.timeOut(), spec.timeoutMs);
  await run.outcomes.done;
  clearTimeout(timer);
  clearInterval(watch);
  await run.finish(spec.pool === undefined);
  // Workers that never ran a launch hold no earlier launch's code: a launch on them is not run again.
  if (run.strayed && spec.freshWorkers !== true) {
    pool.noteRunAgain();
    return runWorkers({ ...spec, freshWorkers: true }, program, device);
  }
  return run.result(started);
}

/**
 * One launch on worker threads, in the order runWorkers takes its steps:
 * listen to every rank's port and worker, start the program on each, watch
 * the process's memory, and once every rank has an outcome, give the workers
 * back and build the result. The bookkeeping (the fabric, which lives in
 * this thread, the outcomes, the device reports) is ThreadLaunch's, shared
 * with the browser's Web Workers; what is here is Node's: the pool, the
 * output streams, the memory watch and polling the ports.
 */
class WorkersLaunch {
  private readonly n: number;
  private readonly book: ThreadLaunch;
  /** Workers that must not go back to the pool: stopped, out of memory, or gone. */
  private readonly spoiled = new Set<number>();
  private readonly outputs: RankOutput[];
  private readonly handlers: ((m: FromRank) => void)[] = [];
  private readonly unlisten: (() => void)[] = [];
  private readonly pollMs: number;
  private readonly pollCost = new PollCost();
  private polling = false;

  constructor(
    spec: Spec,
    device: DeviceModel | null,
    private readonly pool: WorkerPool,
    private readonly workers: RankWorker[],
  ) {
    this.n = spec.worldSize;
    this.book = new ThreadLaunch(spec, device, {
      post: (rank, m, transfer = []) => workers[rank]!.post(m, transfer),
      stop: (rank) => this.stop(rank),
    });
    this.outputs = workers.map((w, rank) => new RankOutput(rank, spec.output ?? 'prefix', spec.outputLimitBytes ?? 1 << 20, w.worker, this.book.marker));
    this.pollMs = (spec.pollUs ?? DEFAULT_POLL_US) / 1000;
  }

  /** Resolves when every rank has an outcome. */
  get outcomes() {
    return this.book.outcomes;
  }

  /** Whether some rank's thread ran code of an earlier launch during this one (ThreadLaunch.strayed). */
  get strayed(): boolean {
    return this.book.strayed.size > 0;
  }

  /** Listens to every rank's port (its messages) and worker (errors, exit). */
  listen(): void {
    const { book } = this;
    this.workers.forEach((w, rank) => {
      const onMessage = (m: FromRank) => book.receive(rank, m);
      const onError = (e: Error & { code?: string }) => {
        this.spoiled.add(rank);
        if (e.code === 'ERR_WORKER_OUT_OF_MEMORY') book.fail(rank, 'error', new OutOfMemoryError(rank, this.pool.memoryLimitMb, 'the JavaScript heap is full'), true);
        else book.fail(rank, 'error', e, true);
      };
      this.handlers[rank] = onMessage;
      const onPortMessage = (m: FromRank) => {
        onMessage(m);
        this.poll();
      };
      const onExit = (code: number) => {
        this.spoiled.add(rank);
        if (!book.outcomes.has(rank)) book.fail(rank, 'killed', new Error(`rank ${rank}: its worker exited (code ${code}) before the program returned: did it call process.exit()?`), false);
      };
      w.port.on('message', onPortMessage);
      w.worker.on('error', onError);
      w.worker.on('exit', onExit);
      // A worker that died on its way here (after the pool lent it, before these listeners).
      if (w.exitCode !== undefined) onExit(w.exitCode);
      this.unlisten.push(() => {
        w.port.off('message', onPortMessage);
        w.worker.off('error', onError);
        w.worker.off('exit', onExit);
      });
    });
  }

  /** Starts `program` on every rank. */
  start(program: ProgramRef): void {
    this.book.start(resolve(program.module), program.export ?? 'default');
  }

/**
   * Typed arrays live outside the JavaScript heap, so the heap limit does not
   * cover them: watches the process's resident memory as a whole, and stops
   * the ranks that are running (not waiting) when it exceeds the launch's
   * budget. Returns the interval to clear.
   */
  watchMemory(): ReturnType<typeof setInterval> {
    const memoryLimitMb = this.pool.memoryLimitMb;
    const n = this.n;
    const budget = process.memoryUsage.rss() + n * (memoryLimitMb + WORKER_OVERHEAD_MB) * 1024 * 1024;
    return setInterval(() => {
      const rss = process.memoryUsage.rss();
      if (rss <= budget) return;
      for (let r = 0; r < n; r++) {
        if (!this.outcomes.has(r) && this.book.fabric.describe(r).waiting === null) {
          this.book.fail(r, 'error', new OutOfMemoryError(r, memoryLimitMb, `the process grew to ${Math.round(rss / 2 ** 20)} MB (budget ${Math.round(budget / 2 ** 20)} MB for ${n} rank${n === 1 ? '' : 's'}) while this rank was running`), true);
        }
      }
    }, RSS_POLL_MS);
  }

  /** The launch's time is up: ranks without an outcome time out, and their workers are stopped. */
  timeOut(): void {
    this.book.timeOut();
  }

  /** Every rank has an outcome: closes the fabric, flushes output, stops listening, gives the workers back. */
  async finish(closePool: boolean): Promise<void> {
    this.book.fabric.close();
    await Promise.all(this.outputs.map((o) => o.flush()));
    for (const off of this.unlisten) off();
    // After a stray (see runWorkers), none of the launch's workers is lent again: each may hold more of it.
    const strayed = this.strayed;
    await Promise.all(this.workers.map((w, rank) => this.pool.release(w, !strayed && !this.spoiled.has(rank))));
    if (closePool) await this.pool.close();
  }

  /** The launch's result: outcomes with captured output, the trace, the stats, the device figures. */
  result(started: number): LaunchResult {
    return this.book.result(started, (rank) => this.outputs[rank]!.captured());
  }

  private stop(rank: number): void {
    this.spoiled.add(rank);
    void this.workers[rank]!.worker.terminate();
  }

  /**
   * Handles what the ranks post until none has posted for the window (or
   * POLL_SLICE_MS has gone by). The window is pollMs while polling pays (see
   * PollCost) and a core is free for it: fewer ranks compute than there are
   * cores, so some rank waits for a reply that polling delivers sooner.
   * Otherwise polling would keep a rank from its core, and the window shrinks
   * to TRAILING_MS, long enough to catch what a rank posts right after a send
   * (its next receive).
   */
  private poll(): void {
    if (this.pollMs <= 0 || this.polling) return;
    this.polling = true;
    // Whether polling pays is decided once a poll; whether a core is free, after every message.
    const pays = this.pollCost.worthIt();
    const full = () => pays && this.book.fabric.busyRanks() < CORES;
    const start = performance.now();
    let quietSince = start;
    let window = full() ? this.pollMs : TRAILING_MS;
    let handling = 0;
    let saved = 0;
    for (let now = start; now - quietSince < window && now - start < POLL_SLICE_MS && !this.outcomes.settled; now = performance.now()) {
      for (let r = 0; r < this.n; r++) {
        const got = receiveMessageOnPort(this.workers[r]!.port);
        if (!got) continue;
        const t0 = performance.now();
        if (t0 - quietSince > WAKE_GAP_MS) saved++; // without polling, this message would have had to wake this thread
        this.handlers[r]!(got.message as FromRank);
        quietSince = performance.now();
        handling += quietSince - t0;
        window = full() ? this.pollMs : TRAILING_MS;
      }
    }
    this.pollCost.record(performance.now() - start - handling, saved);
    this.polling = false;
  }
}
