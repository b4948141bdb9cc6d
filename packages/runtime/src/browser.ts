/**
 * @dtlab/runtime in a browser (the package's `browser` export condition,
 * which bundlers such as vite pick for a page or a Web Worker): the same API
 * as index.ts for everything that runs without Node.
 *
 * What differs, and why:
 * - `backend: 'workers'` runs each rank in a dedicated Web Worker
 *   (backends/web-workers.ts) where Node runs a worker thread; the rank loop
 *   and the launcher's bookkeeping are the same code, so messages, traces,
 *   virtual times, device figures, failures and the time limit (a rank's
 *   worker terminated from outside) are Node's. There is no WorkerPool:
 *   every launch starts fresh workers.
 * - Inline ranks, and a rank in its Web Worker, find their meter through
 *   the runtime's own hand-overs (device/task-scope.ts) instead of
 *   AsyncLocalStorage.
 * - No forced garbage collection: with a device, memory counts every buffer
 *   from its allocation until it is sent away (peaks are upper bounds), and
 *   compute, communication and timelines are as in Node.
 * - `program: { module }` is imported by URL (or by a path the page's server
 *   resolves), taken relative to the launching thread's location.
 * Nothing here imports a Node built-in; test/browser-entry.test.ts runs the
 * same programs through this entry and through index.ts and compares them,
 * and the playground's browser test runs test/semantics/ on Web Workers.
 */
import { setMeterScope, resumeContext } from '@dtlab/tensor/meter';
import { LaunchSpecError } from './errors.ts';
import { validateSpec } from './launch-spec.ts';
import { runInline } from './backends/inline.ts';
import { canStartWebWorkers, runWebWorkers } from './backends/web-workers.ts';
import { resolveDevice } from './device/presets.ts';
import { TaskScope } from './device/task-scope.ts';
import type { LaunchResult, LaunchSpec, ProgramRef, RankProgram } from './types.ts';

/** Default wall-clock limit of a launch, in milliseconds (as in Node). */
export const DEFAULT_TIMEOUT_MS = 60_000;
/** Default heap limit per rank worker, in MB (not enforced in a browser, which has no heap limit per worker; kept for the same API). */
export const DEFAULT_MEMORY_LIMIT_MB = 512;

const scope = new TaskScope();

async function loadProgram(ref: ProgramRef): Promise<RankProgram> {
  const mod = (await import(/* @vite-ignore */ ref.module)) as Record<string, unknown>;
  const name = ref.export ?? 'default';
  const fn = mod[name];
  if (typeof fn !== 'function') throw new LaunchSpecError(`launch: ${ref.module} has no exported function '${name}'`);
  return fn as RankProgram;
}

/**
 * Runs `spec.program` on every rank, inline in this thread or (`backend:
 * 'workers'`) each in a Web Worker, and resolves when all ranks have ended
 * (or the timeout stopped them). Throws only for an invalid spec, or for
 * `backend: 'workers'` where no Web Worker can start (Node).
 */
export async function launch(spec: LaunchSpec): Promise<LaunchResult> {
  validateSpec(spec, () => false);
  const device = spec.device === undefined ? null : resolveDevice(spec.device);
  const full = { ...spec, timeoutMs: spec.timeoutMs ?? DEFAULT_TIMEOUT_MS, seed: spec.seed ?? 0, memoryLimitMb: spec.memoryLimitMb ?? DEFAULT_MEMORY_LIMIT_MB };
  if (spec.backend === 'workers') {
    if (!canStartWebWorkers()) throw new LaunchSpecError("launch: backend 'workers' in the browser build runs each rank in a Web Worker, and this thread has no Worker: run it in a page or a Web Worker, or import the Node build (@dtlab/runtime under node) for worker threads");
    return runWebWorkers(full, spec.program as ProgramRef, device);
  }
  const program = typeof spec.program === 'function' ? spec.program : await loadProgram(spec.program);
  setMeterScope(scope);
  try {
    return await runInline(full, program, { device });
  } finally {
    // The launcher's own code after the launch is no rank's.
    resumeContext(undefined);
  }
}

export { Comm, Work, type SendOptions, type RecvOptions } from './comm.ts';
export { DEFAULT_COST } from './fabric/clock.ts';
export { retainedBytes } from './retained-bytes.ts';
export {
  DeadlockError,
  RankFailedError,
  CommTimeoutError,
  RankTimeoutError,
  RecvMismatchError,
  InjectedFaultError,
  LaunchSpecError,
  WorkerStartError,
  OutOfMemoryError,
  type DeviceAllocation,
  CollectiveMismatchError,
  ClockHiddenError,
  describeCall,
  type CollectiveCall,
} from './errors.ts';
export type { LaunchSpec, LaunchResult, RankOutcome, RankProgram, ProgramRef, TraceEvent, RankStats, CostModel, Fault, OutputMode, BlockedRank } from './types.ts';
export { formatSummary, formatOutcome, formatBytes, formatUs } from './report.ts';
export { memory, profile } from './device/api.ts';
export { formatProfile, formatCount, type ProfileFormat } from './device/format-profile.ts';
export { chromeTrace, type ChromeTrace, type TraceEventRecord } from './device/chrome-trace.ts';
export { DEVICE_PRESETS, DEFAULT_DEVICE, type DeviceSpec, type DevicePreset } from './device/presets.ts';
export type { DeviceReport, RankDeviceStats } from './types.ts';
export type { MemoryMark, SnapshotRow, MemoryFigures, OpFigures, RegionFigures, StreamFigures, Timeline } from '@dtlab/tensor/meter';
