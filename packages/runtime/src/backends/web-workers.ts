/**
 * The workers backend in a browser: a dedicated Web Worker per rank
 * (web-worker-main.ts), with the fabric in the launching thread (a page, or
 * a Web Worker of its own: Chromium and Firefox start nested workers). The
 * launch's bookkeeping is ThreadLaunch's and the rank side is rank-loop.ts,
 * both shared with Node's worker threads (workers.ts), so the messages, their
 * order per (source, tag), the bytes, the trace, the virtual clock, the
 * device figures, failures, deadlocks and the time limit are the same. A rank
 * still running at the limit has its worker terminated from here, which ends
 * a synchronous infinite loop.
 *
 * What a browser lacks, and so this backend does not do:
 * - no worker pool: every launch starts fresh workers and terminates them
 *   afterwards (module state never carries over, as with `freshWorkers`);
 * - no heap limit per rank (`memoryLimitMb` is not enforced);
 * - rank output is not captured: a rank's console is the worker's, in the
 *   browser's console (`output` is ignored);
 * - no polling for messages (`pollUs` is ignored), and no forced collection
 *   (with a device, memory peaks are upper bounds);
 * - a worker that closes itself is not noticed until the time limit.
 */
import { WorkerStartError } from '../errors.ts';
import { ThreadLaunch, type ThreadLaunchSpec } from './thread-launch.ts';
import type { FromRank, ToRank } from './protocol.ts';
import type { LaunchResult, ProgramRef } from '../types.ts';
import type { DeviceModel } from '@dtlab/tensor/meter';

/** How long a rank's worker may take to load its script and say it is ready. */
export const WEB_WORKER_STARTUP_MS = 30_000;

/** The part of a browser's Worker used here (the package's typings have no DOM). */
interface WebWorker {
  postMessage(m: ToRank, transfer: ArrayBuffer[]): void;
  terminate(): void;
  onmessage: ((e: { data: FromRank }) => void) | null;
  onerror: ((e: { message?: string; filename?: string; lineno?: number; error?: unknown; preventDefault(): void }) => void) | null;
  onmessageerror: (() => void) | null;
}
type WorkerClass = new (url: URL, opts: { type: 'module'; name?: string }) => WebWorker;

/** True where this thread can start Web Workers (a page, a dedicated worker; not Node). */
export function canStartWebWorkers(): boolean {
  return typeof (globalThis as { Worker?: unknown }).Worker === 'function';
}

/** Starts one rank's worker; resolves once it says it is ready. */
function startRankWorker(rank: number): Promise<WebWorker> {
  const Worker = (globalThis as unknown as { Worker: WorkerClass }).Worker;
  // Written out in one expression so that bundlers (vite) see the worker's entry and serve or build it.
  const worker = new Worker(new URL('./web-worker-main.ts', import.meta.url), { type: 'module' });
  return new Promise((resolve, reject) => {
    const fail = (why: string) => {
      clearTimeout(timer);
      worker.onmessage = worker.onerror = null;
      worker.terminate();
      reject(new WorkerStartError(`could not start the Web Worker of rank ${rank}: ${why}`));
    };
    const timer = setTimeout(() => fail(`not ready after ${WEB_WORKER_STARTUP_MS} ms`), WEB_WORKER_STARTUP_MS);
    worker.onmessage = (e) => {
      if (e.data?.t !== 'ready') return;
      clearTimeout(timer);
      worker.onmessage = worker.onerror = null;
      resolve(worker);
    };
    worker.onerror = (e) => {
      e.preventDefault();
      fail(e.message || 'its script did not load (see the browser console)');
    };
  });
}

/** What a worker's error event says, as an Error naming the rank. */
function workerError(rank: number, e: { message?: string; filename?: string; lineno?: number; error?: unknown }): Error {
  if (e.error instanceof Error) return e.error;
  const where = e.filename ? ` (${e.filename}${e.lineno ? `:${e.lineno}` : ''})` : '';
  return new Error(`rank ${rank}: ${e.message || 'its worker failed'}${where}`);
}

/**
 * Runs the program module (a URL, or a path the page's server resolves,
 * taken relative to this thread's location) on `spec.worldSize` Web Workers,
 * each with `device` (or none). Never throws because a rank failed.
 */
export async function runWebWorkers(spec: ThreadLaunchSpec, program: ProgramRef, device: DeviceModel | null = null): Promise<LaunchResult> {
  const started = Date.now();
  const module = new URL(program.module, (globalThis as { location?: { href: string } }).location?.href).href;
  const starting = Array.from({ length: spec.worldSize }, (_, rank) => startRankWorker(rank));
  const settled = await Promise.allSettled(starting);
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) {
    for (const s of settled) if (s.status === 'fulfilled') s.value.terminate();
    const error = failed.reason as Error;
    const ranks = Array.from({ length: spec.worldSize }, (_, rank) => ({ rank, status: 'error' as const, error }));
    return { ranks, trace: [], stats: [], wallMs: Date.now() - started, ok: false };
  }
  const workers = settled.map((s) => (s as PromiseFulfilledResult<WebWorker>).value);
  const stopped = new Set<number>();
  const stop = (rank: number) => {
    if (stopped.has(rank)) return;
    stopped.add(rank);
    workers[rank]!.terminate();
  };
  const book = new ThreadLaunch(spec, device, { post: (rank, m, transfer = []) => workers[rank]!.postMessage(m, transfer), stop });
  workers.forEach((w, rank) => {
    w.onmessage = (e) => book.receive(rank, e.data);
    w.onerror = (e) => {
      e.preventDefault();
      book.fail(rank, 'error', workerError(rank, e), true);
    };
    w.onmessageerror = () => book.fail(rank, 'error', new Error(`rank ${rank}: a message from its worker could not be read`), true);
  });
  book.start(module, program.export ?? 'default');
  const timer = setTimeout(() => book.timeOut(), spec.timeoutMs);
  await book.outcomes.done;
  clearTimeout(timer);
  book.fabric.close();
  for (let rank = 0; rank < workers.length; rank++) stop(rank);
  return book.result(started);
}
