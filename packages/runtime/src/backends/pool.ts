/**
 * A pool of rank workers. Starting a worker is the slow part of a launch
 * (a V8 isolate, the TypeScript loader, the tensor library), so a pool
 * starts each worker once and lends it to launch after launch.
 *
 * Every worker must say it is ready within a start-up limit; one that does
 * not (a slow or stuck start) is terminated and started again, so start-up
 * trouble never counts against a rank program's own time limit.
 *
 * A worker that ended its last launch cleanly (its program returned or
 * threw) goes back to the pool; one that timed out, ran out of memory or was
 * killed is terminated. Module state lives as long as the worker: a program
 * module is imported once per worker and stays loaded between launches,
 * except the untrusted modules of a pool that reuses its workers, which each
 * launch loads afresh (precompiled-loader.cjs, freshLaunch).
 */
import { createRequire } from 'node:module';
import { MessageChannel, Worker, type MessagePort } from 'node:worker_threads';
import type { ToRank } from './protocol.ts';
import { refuseIfConfined } from '../loading/confined.ts';
import { WorkerStartError } from '../errors.ts';
import { PRECOMPILED_BOOT, workerBoot } from '../loading/boot.ts';
import type { PrecompiledModules } from '../loading/precompile.ts';

// The precompiled-module loader as this thread's own boot loaded it (grading-process-boot.cjs, say), if it did:
// looked up in the module cache, never loaded here, and by a name the bundler does not follow.
const requireHere = createRequire(import.meta.url);
const LOADER = requireHere.resolve('../loading/precompiled-loader.cjs');
type Loader = { bundleCodeFor(bundle: string): Uint8Array | null };
// V8's code for a bundle this thread loaded itself, by bundle path: made once, for every pool of the process.
const hostCode = new Map<string, Uint8Array | null>();

/**
 * V8's code for `bundle` from this thread, if this thread loaded the course
 * from that bundle (a grading process does): then every worker a pool starts
 * skips compiling it, the first ones included, and so do the workers of
 * every fresh pool (a TA's grading starts one per launch). Null otherwise.
 */
function codeFromThisThread(bundle: string): Uint8Array | null {
  if (!hostCode.has(bundle)) {
    const loader = requireHere.cache[LOADER]?.exports as Loader | undefined;
    hostCode.set(bundle, loader?.bundleCodeFor(bundle) ?? null);
  }
  return hostCode.get(bundle)!;
}

/** Options of a worker pool. */
export interface WorkerPoolOptions {
  /** Heap limit of each worker, in MB. Default 512. */
  memoryLimitMb?: number;
  /** How long a worker may take to start before it is started again. Default 30000 ms. */
  startupTimeoutMs?: number;
  /** How many times to try starting one worker. Default 3. */
  startupAttempts?: number;
  /**
   * TypeScript compiled ahead (see precompile.ts): workers then start
   * without tsx, loading course modules from the bundle and other files
   * from the compiled modules, and register tsx only for a file in neither.
   */
  precompiled?: PrecompiledModules;
}

/** A worker could not be started (after every attempt); defined with the other errors, which a browser build shares. */
export { WorkerStartError } from '../errors.ts';

/**
 * One rank worker and its thread. Launches talk to it over `port` (a
 * MessagePort, not the worker's own channel), so the launching thread can
 * also poll for its messages with receiveMessageOnPort.
 */
export class RankWorker {
  /** The thread's exit code, once it has exited (the pool sees it go, whoever has the worker then). */
  exitCode: number | undefined = undefined;
  /** How many launches the worker was lent to. */
  served = 0;

  constructor(
    readonly worker: Worker,
    readonly port: MessagePort,
  ) {}

  /** Sends a message to the worker. */
  post(m: ToRank, transfer: ArrayBuffer[] = []): void {
    this.port.postMessage(m, transfer);
  }
}

/** Rank workers to lend to launches; see the file comment. */
export class WorkerPool {
  readonly memoryLimitMb: number;
  private readonly idle: RankWorker[] = [];
  // Starts begun by warm() that no launch has claimed yet, oldest first.
  private readonly starting: Promise<RankWorker>[] = [];
  private readonly all = new Set<RankWorker>();
  // Threads still starting (startOnce), so that close() can stop them rather than wait for them to come up.
  private readonly booting = new Set<Worker>();
  private closed = false;
  // Whether release() starts a replacement ahead of need (see stopWarming).
  private warming = true;
  private runAgain = 0;
  // V8's code for the bundle, from this thread (codeFromThisThread) or else from the first worker that loaded
  // it (see PRECOMPILED_BOOT): the workers given it skip compiling the bundle.
  private bundleCode: Uint8Array | null = null;

  constructor(private readonly opts: WorkerPoolOptions = {}) {
    refuseIfConfined('start worker threads'); // they would not be confined
    this.memoryLimitMb = opts.memoryLimitMb ?? 512;
  }

  /**
   * Whether each worker serves one launch only (untrusted modules, not
   * reuseWorkers): every launch then meets workers that never ran anything,
   * as a pool of its own would give it.
   */
  get lendsOnce(): boolean {
    return this.opts.precompiled?.untrusted !== undefined && !this.opts.precompiled.untrusted.reuseWorkers;
  }

  /**
   * How many launches on this pool's workers were run again because code
   * of an earlier launch ran during them (see runWorkers in workers.ts).
   */
  get launchesRunAgain(): number {
    return this.runAgain;
  }

  /** @internal A launch on this pool's workers is run again (see launchesRunAgain). */
  noteRunAgain(): void {
    this.runAgain++;
  }

  /** Number of live workers (idle and lent). */
  get size(): number {
    return this.all.size;
  }

  /**
   * Starts workers until `n` are idle or starting, so that launches of up to
   * `n` ranks find them ready; resolves when all are up. A launch need not
   * wait for that: it takes workers still starting here as they come up.
   */
  async warm(n: number): Promise<void> {
    const missing = Math.max(0, n - this.idle.length - this.starting.length);
    const started = Array.from({ length: missing }, () => {
      const p = this.start();
      this.starting.push(p);
      p.then(
        (w) => {
          // Unless a launch claimed it meanwhile, it waits in the pool (or goes, if the pool closed).
          if (this.unclaim(p)) {
            if (this.closed) void this.discard(w);
            else this.park(w);
          }
        },
        () => void this.unclaim(p),
      );
      return p;
    });
    // A start that failed fails the warm-up, unless the pool was closed meanwhile (close() stops starts).
    const settled = await Promise.allSettled(started);
    const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed && !this.closed) throw failed.reason;
  }

  /**
   * @internal Lends `n` ready workers: idle ones, then ones warm() is
   * starting, then new ones; with `fresh`, only workers that never served
   * a launch (idle ones no launch took yet, ones starting, new ones).
   */
  async acquire(n: number, fresh = false): Promise<RankWorker[]> {
    if (this.closed) throw new WorkerStartError('the worker pool is closed');
    const taken = fresh ? this.takeIdle(n, (w) => w.served === 0) : this.idle.splice(0, n);
    const claimed = this.starting.splice(0, n - taken.length);
    const started = Array.from({ length: n - taken.length - claimed.length }, () => this.start());
    const out = [...taken, ...(await Promise.all([...claimed, ...started]))];
    for (const w of out) {
      w.served++;
      w.worker.ref();
      w.port.ref();
    }
    return out;
  }

  /** Takes up to `n` idle workers that `ok` accepts, oldest first. */
  private takeIdle(n: number, ok: (w: RankWorker) => boolean): RankWorker[] {
    const taken: RankWorker[] = [];
    for (let i = 0; i < this.idle.length && taken.length < n; ) {
      if (ok(this.idle[i]!)) taken.push(...this.idle.splice(i, 1));
      else i++;
    }
    return taken;
  }

  /** Removes `p` from the starts no launch has claimed; false if a launch had claimed it. */
  private unclaim(p: Promise<RankWorker>): boolean {
    const i = this.starting.indexOf(p);
    if (i >= 0) this.starting.splice(i, 1);
    return i >= 0;
  }

  /** @internal Takes a worker back: to the pool if `reusable`, else it is terminated. */
  release(w: RankWorker, reusable: boolean): Promise<void> {
    if (reusable && !this.closed && !this.lendsOnce) {
      this.park(w);
      return Promise.resolve();
    }
    const gone = this.discard(w);
    // A worker that ran untrusted code is never lent again, so that nothing it left behind (state,
    // hooks) meets a later launch; a fresh one starts now in its place.
    if (reusable && !this.closed && this.lendsOnce && this.warming) void this.warm(this.idle.length + this.starting.length + 1).catch(() => undefined);
    return gone;
  }

  /**
   * Starts no more workers ahead of need: a worker a launch released is not
   * replaced at once (lendsOnce), and the workers still idle or starting
   * serve the launches to come, which start more only if they need them.
   * For the last part of a job, so that no worker starts that no launch will
   * take.
   */
  stopWarming(): void {
    this.warming = false;
  }

  /**
   * Terminates every worker, those still starting too: a worker that warm()
   * or a release began (a fresh one for the next launch) and no launch will
   * take is stopped where it is, not left to finish starting first.
   */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.booting].map((w) => w.terminate()));
    await Promise.allSettled([...this.starting]); // each is discarded as it comes up
    await Promise.all([...this.all].map((w) => this.discard(w)));
  }

  /**
   * Listens to a worker for as long as it lives: one that dies while idle
   * (an error its last launch's code left to be thrown later) leaves the
   * pool, and never takes this process with it, as a worker's 'error' with
   * no listener would. A launch that has it listens too (workers.ts).
   */
  private watch(w: RankWorker): void {
    const gone = (code?: unknown) => {
      if (typeof code === 'number') w.exitCode = code;
      const i = this.idle.indexOf(w);
      if (i < 0) return;
      this.idle.splice(i, 1);
      this.all.delete(w);
      w.port.close();
    };
    w.worker.on('error', gone);
    w.worker.once('exit', gone);
  }

  private park(w: RankWorker): void {
    // An idle worker must not keep the process alive.
    w.worker.unref();
    w.port.unref();
    this.idle.push(w);
  }

  private async discard(w: RankWorker): Promise<void> {
    this.all.delete(w);
    const i = this.idle.indexOf(w);
    if (i >= 0) this.idle.splice(i, 1);
    w.port.close();
    await w.worker.terminate();
  }

  private async start(): Promise<RankWorker> {
    const attempts = this.opts.startupAttempts ?? 3;
    const problems: string[] = [];
    for (let attempt = 1; attempt <= attempts; attempt++) {
      if (this.closed) throw new WorkerStartError('the worker pool was closed while the worker started');
      try {
        const w = await this.startOnce();
        this.all.add(w);
        return w;
      } catch (e) {
        problems.push(`attempt ${attempt}: ${(e as Error).message}`);
      }
    }
    throw new WorkerStartError(`could not start a rank worker (${problems.join('; ')})`);
  }

  private startOnce(): Promise<RankWorker> {
    const mb = this.memoryLimitMb;
    const channel = new MessageChannel();
    const pre = this.opts.precompiled;
    if (pre?.bundle !== undefined && this.bundleCode === null) this.bundleCode = codeFromThisThread(pre.bundle);
    const wantBundleCode = pre?.bundle !== undefined && this.bundleCode === null;
    const code = pre ? (wantBundleCode ? { wantBundleCode } : { bundleCode: this.bundleCode }) : {};
    const worker = new Worker(pre ? PRECOMPILED_BOOT : workerBoot(), {
      eval: true,
      workerData: { port: channel.port2, ...(pre ? { precompiled: pre, ...code } : {}) },
      transferList: [channel.port2],
      resourceLimits: { maxOldGenerationSizeMb: mb, maxYoungGenerationSizeMb: Math.min(64, Math.max(8, mb / 8)) },
      stdout: true,
      stderr: true,
      name: 'dtlab rank worker',
    });
    this.booting.add(worker);
    // Output is read by each launch; until then it is drained and dropped.
    worker.stdout.resume();
    worker.stderr.resume();
    const limit = this.opts.startupTimeoutMs ?? 30_000;
    return new Promise((resolve, reject) => {
      const fail = (why: string) => {
        this.booting.delete(worker);
        clearTimeout(timer);
        worker.off('message', onMessage);
        channel.port1.close();
        void worker.terminate();
        reject(new Error(why));
      };
      const timer = setTimeout(() => fail(`not ready after ${limit} ms`), limit);
      // A worker asked for the bundle's code posts it right after 'ready', before it can run a launch.
      let ready = false;
      let codeToCome = wantBundleCode;
      const onMessage = (m: { t?: string; code?: unknown }) => {
        if (m?.t === 'ready') ready = true;
        else if (m?.t === 'bundle-code' && codeToCome) {
          codeToCome = false;
          if (m.code instanceof Uint8Array && this.bundleCode === null) this.bundleCode = m.code;
        }
        if (!ready || codeToCome) return;
        this.booting.delete(worker);
        clearTimeout(timer);
        worker.off('message', onMessage);
        worker.off('error', onError);
        worker.off('exit', onExit);
        const w = new RankWorker(worker, channel.port1);
        this.watch(w);
        resolve(w);
      };
      const onError = (e: Error) => fail(`failed while starting: ${e.message}`);
      const onExit = (code: number) => fail(`exited with code ${code} while starting`);
      worker.on('message', onMessage);
      worker.once('error', onError);
      worker.once('exit', onExit);
    });
  }
}
