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
 * module is imported once per worker and stays loaded between launches.
 */
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { MessageChannel, Worker, type MessagePort } from 'node:worker_threads';
import type { ToRank } from './protocol.ts';
import { refuseIfConfined } from '../confined.ts';
import { WORKER_MAIN, type PrecompiledModules } from './precompile.ts';

const here = (name: string) => fileURLToPath(new URL(name, import.meta.url));
const TSX_CACHE_GUARD = here('./tsx-cache.cjs');
const TSX_API = createRequire(import.meta.url).resolve('tsx/cjs/api');

/**
 * A rank worker's first code, in plain CommonJS, given to the Worker as a
 * string (`eval: true`): it guards tsx's cache (tsx-cache.cjs), registers
 * tsx's require hook, and loads worker-main.ts through it.
 *
 * - A string, not a file: Node 20 starts a worker from a file through its
 *   ES-module loader, even a .cjs file, and loading that loader's own code
 *   into each new thread made 5 workers cost 0.9 s of CPU time to start
 *   instead of 0.65 s.
 * - tsx's require hook, not its ES-module loader: that loader compiles in a
 *   hooks thread of its own, so every import crosses threads and each worker
 *   would start one (a worker then took about 0.2 s to start). The require
 *   hook compiles in this thread. So a rank worker loads the course's
 *   modules, the rank program and everything they import as CommonJS (tsx
 *   turns their import/export syntax into require); nothing a worker loads
 *   may use top-level await.
 */
const WORKER_BOOT = [`require(${JSON.stringify(TSX_CACHE_GUARD)});`, `require(${JSON.stringify(TSX_API)}).register();`, `require(${JSON.stringify(WORKER_MAIN)});`].join('\n');

/** A rank worker's first code when its pool has precompiled modules: the loader of precompiled-loader.cjs, then worker-main.ts through it. */
const PRECOMPILED_BOOT = [
  `const { precompiled } = require('node:worker_threads').workerData;`,
  `const loader = require(${JSON.stringify(here('./precompiled-loader.cjs'))});`,
  `loader.install(precompiled);`,
  `require(${JSON.stringify(WORKER_MAIN)});`,
  `if (precompiled.untrusted) loader.confine();`,
].join('\n');

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

/** A worker could not be started (after every attempt). */
export class WorkerStartError extends Error {
  override name = 'WorkerStartError';
}

/**
 * One rank worker and its thread. Launches talk to it over `port` (a
 * MessagePort, not the worker's own channel), so the launching thread can
 * also poll for its messages with receiveMessageOnPort.
 */
export class RankWorker {
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
  private closed = false;

  constructor(private readonly opts: WorkerPoolOptions = {}) {
    refuseIfConfined('start worker threads'); // they would not be confined
    this.memoryLimitMb = opts.memoryLimitMb ?? 512;
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
    await Promise.all(started);
  }

  /** @internal Lends `n` ready workers: idle ones, then ones warm() is starting, then new ones. */
  async acquire(n: number): Promise<RankWorker[]> {
    if (this.closed) throw new WorkerStartError('the worker pool is closed');
    const taken = this.idle.splice(0, n);
    const claimed = this.starting.splice(0, n - taken.length);
    const fresh = Array.from({ length: n - taken.length - claimed.length }, () => this.start());
    const out = [...taken, ...(await Promise.all([...claimed, ...fresh]))];
    for (const w of out) {
      w.worker.ref();
      w.port.ref();
    }
    return out;
  }

  /** Removes `p` from the starts no launch has claimed; false if a launch had claimed it. */
  private unclaim(p: Promise<RankWorker>): boolean {
    const i = this.starting.indexOf(p);
    if (i >= 0) this.starting.splice(i, 1);
    return i >= 0;
  }

  /** @internal Takes a worker back: to the pool if `reusable`, else it is terminated. */
  release(w: RankWorker, reusable: boolean): Promise<void> {
    const untrusted = this.opts.precompiled?.untrusted !== undefined && !this.opts.precompiled.untrusted.reuseWorkers;
    if (reusable && !this.closed && !untrusted) {
      this.park(w);
      return Promise.resolve();
    }
    const gone = this.discard(w);
    // A worker that ran untrusted code is never lent again, so that nothing it left behind (state,
    // hooks) meets a later launch; a fresh one starts now in its place.
    if (reusable && !this.closed && untrusted) void this.warm(this.idle.length + this.starting.length + 1).catch(() => undefined);
    return gone;
  }

  /** Terminates every worker. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.allSettled([...this.starting]); // each is discarded as it comes up
    await Promise.all([...this.all].map((w) => this.discard(w)));
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
    const worker = new Worker(pre ? PRECOMPILED_BOOT : WORKER_BOOT, {
      eval: true,
      workerData: { port: channel.port2, ...(pre ? { precompiled: pre } : {}) },
      transferList: [channel.port2],
      resourceLimits: { maxOldGenerationSizeMb: mb, maxYoungGenerationSizeMb: Math.min(64, Math.max(8, mb / 8)) },
      stdout: true,
      stderr: true,
      name: 'dtlab rank worker',
    });
    // Output is read by each launch; until then it is drained and dropped.
    worker.stdout.resume();
    worker.stderr.resume();
    const limit = this.opts.startupTimeoutMs ?? 30_000;
    return new Promise((resolve, reject) => {
      const fail = (why: string) => {
        clearTimeout(timer);
        worker.off('message', onMessage);
        channel.port1.close();
        void worker.terminate();
        reject(new Error(why));
      };
      const timer = setTimeout(() => fail(`not ready after ${limit} ms`), limit);
      const onMessage = (m: { t?: string }) => {
        if (m?.t !== 'ready') return;
        clearTimeout(timer);
        worker.off('message', onMessage);
        worker.off('error', onError);
        worker.off('exit', onExit);
        resolve(new RankWorker(worker, channel.port1));
      };
      const onError = (e: Error) => fail(`failed while starting: ${e.message}`);
      const onExit = (code: number) => fail(`exited with code ${code} while starting`);
      worker.on('message', onMessage);
      worker.once('error', onError);
      worker.once('exit', onExit);
    });
  }
}
