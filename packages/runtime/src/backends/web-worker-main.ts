/**
 * The entry point of a rank's Web Worker (the browser's workers backend,
 * web-workers.ts): the browser's counterpart of worker-main.ts, running the
 * same rank loop (rank-loop.ts). Here a message goes over the worker's own
 * channel (`postMessage`, with the same wire format and the same buffers
 * moved), a program module is imported by URL, tasks come from a
 * MessageChannel (next-task.ts), and the meter follows the rank's code
 * through the runtime's hand-overs (device/task-scope.ts), with the rank's
 * main context as the fallback. There is no forced collection, so with a
 * device memory counts every buffer until it is sent away (as inline in a
 * browser). Nothing here imports a Node built-in.
 */
import { installAllocationHooks, setMeterScope } from '@dtlab/tensor/meter';
import { TaskScope } from '../device/task-scope.ts';
import { nextTask } from '../next-task.ts';
import { serveRank } from './rank-loop.ts';
import type { FromRank, ToRank } from './protocol.ts';

/** The part of a dedicated worker's global scope used here (the package's typings have no DOM). */
interface WorkerScope {
  postMessage(m: unknown, transfer: ArrayBuffer[]): void;
  onmessage: ((e: { data: ToRank }) => void) | null;
  addEventListener(type: 'unhandledrejection', fn: (e: { reason: unknown; preventDefault(): void }) => void): void;
  addEventListener(type: 'error', fn: (e: { error?: unknown; message?: string; preventDefault(): void }) => void): void;
  close(): void;
}

const worker = globalThis as unknown as WorkerScope;
const scope = new TaskScope();
setMeterScope(scope);
installAllocationHooks();

const rank = serveRank({
  post: (m, transfer = []) => worker.postMessage(m, transfer),
  nextTask,
  load: async (init) => (await import(/* @vite-ignore */ init.module)) as Record<string, unknown>,
  host: { gc: undefined },
  setFallback: (ctx) => void (scope.fallback = ctx),
  ending: () => {},
});
worker.onmessage = (e) => rank.handle(e.data);
// An error the rank's code throws where nothing catches it ends a Node worker thread, and the
// launcher reports the rank failed with that error; here the rank reports it itself, with its
// class, message and fields (as Node's worker error carries them), and its worker closes.
const uncaught = (error: unknown, e: { preventDefault(): void }) => {
  if (!rank.failRunning(error)) return; // nothing runs: the browser reports it in the console
  e.preventDefault();
  worker.close();
};
worker.addEventListener('unhandledrejection', (e) => uncaught(e.reason, e));
worker.addEventListener('error', (e) => uncaught(e.error ?? new Error(e.message ?? 'an uncaught error'), e));
worker.postMessage({ t: 'ready' } satisfies FromRank, []);
