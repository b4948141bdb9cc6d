/**
 * What makes a launch spec runnable: the checks `launch` makes before it
 * starts a rank, the same in every host (Node's launch.ts, the browser's
 * browser.ts), and the device options every rank gets from it.
 */
import type { DeviceModel } from '@dtlab/tensor/meter';
import { LaunchSpecError } from './errors.ts';
import type { LaunchSpec } from './types.ts';
import type { RankDeviceOptions } from './device/rank-runtime.ts';

const MAX_TIMER_MS = 2 ** 31 - 1;

/** A value as a message shows it: strings quoted, numbers (Infinity, NaN) as they are. */
function show(v: unknown): string {
  return typeof v === 'string' ? JSON.stringify(v) : String(v);
}

function check(cond: boolean, message: string): void {
  if (!cond) throw new LaunchSpecError(`launch: ${message}`);
}

/**
 * Throws LaunchSpecError naming the first field of `spec` that cannot run.
 * `isPool` tells a WorkerPool (the host's: a browser has none).
 */
export function validateSpec(spec: LaunchSpec, isPool: (p: unknown) => boolean): void {
  check(spec !== null && typeof spec === 'object', 'expected a spec object like { worldSize: 4, program }');
  check(Number.isInteger(spec.worldSize) && spec.worldSize >= 1 && spec.worldSize <= 256, `worldSize must be an integer from 1 to 256, got ${spec.worldSize}`);
  check(spec.backend === undefined || spec.backend === 'inline' || spec.backend === 'workers', `backend must be 'inline' or 'workers', got ${JSON.stringify(spec.backend)}`);
  const p = spec.program;
  check(typeof p === 'function' || (p !== null && typeof p === 'object' && typeof p.module === 'string'), "program must be a function or { module: 'path/to/file.ts', export: 'name' }");
  check(!(spec.backend === 'workers' && typeof p === 'function'), "the workers backend runs each rank in its own thread and cannot take a function: pass program: { module: '/path/to/file.ts', export: 'name' }");
  for (const key of ['timeoutMs', 'commTimeoutMs', 'memoryLimitMb'] as const) {
    const v = spec[key];
    // setTimeout fires at once for delays beyond 2^31 - 1 ms, so those are refused too.
    check(v === undefined || (typeof v === 'number' && v > 0 && v <= MAX_TIMER_MS), `${key} must be a positive number up to ${MAX_TIMER_MS}, got ${show(v)}`);
  }
  check(spec.pollUs === undefined || (typeof spec.pollUs === 'number' && spec.pollUs >= 0 && spec.pollUs <= 1000), `pollUs must be a number of microseconds from 0 (no polling) to 1000, got ${show(spec.pollUs)}`);
  check(spec.seed === undefined || Number.isInteger(spec.seed), `seed must be an integer, got ${show(spec.seed)}`);
  check(spec.output === undefined || ['prefix', 'inherit', 'capture', 'ignore'].includes(spec.output), `output must be 'prefix', 'inherit', 'capture' or 'ignore', got ${JSON.stringify(spec.output)}`);
  if (spec.cost) check(spec.cost.alphaUs >= 0 && spec.cost.bytesPerUs > 0, `cost needs alphaUs >= 0 and bytesPerUs > 0, got ${JSON.stringify(spec.cost)}`);
  check(spec.args === undefined || Array.isArray(spec.args), 'args must be an array (the extra arguments after comm)');
  check(spec.pool === undefined || isPool(spec.pool), 'pool must be a WorkerPool (new WorkerPool({ memoryLimitMb }))');
  check(spec.freshWorkers === undefined || typeof spec.freshWorkers === 'boolean', `freshWorkers must be true or false, got ${show(spec.freshWorkers)}`);
  check(spec.faults === undefined || Array.isArray(spec.faults), 'faults must be an array of { kind: ... } records');
  check(spec.timeline === undefined || typeof spec.timeline === 'boolean', `timeline must be true or false, got ${show(spec.timeline)}`);
  check(!(spec.timeline && spec.device === undefined), 'timeline needs a device: add device: \'course\' (or another preset or spec)');
  check(spec.markKey === undefined || (typeof spec.markKey === 'string' && spec.markKey.length > 0), 'markKey must be a non-empty string');
  check(spec.clockKey === undefined || (typeof spec.clockKey === 'string' && spec.clockKey.length > 0), 'clockKey must be a non-empty string');
  check(spec.peakTolerance === undefined || (typeof spec.peakTolerance === 'number' && spec.peakTolerance > 0 && spec.peakTolerance <= 1), `peakTolerance must be a fraction in (0, 1], got ${show(spec.peakTolerance)}`);
  check(spec.memoryPoints === undefined || spec.memoryPoints === 'auto' || spec.memoryPoints === 'marks', `memoryPoints must be 'auto' or 'marks', got ${show(spec.memoryPoints)}`);
  check(!(spec.memoryPoints === 'marks' && spec.peakTolerance !== undefined), "memoryPoints 'marks' collects at marks only, which a peakTolerance cannot keep: pass one of the two");
  check(!(spec.memoryPoints !== undefined && spec.device === undefined), "memoryPoints needs a device: add device: 'course' (or another preset or spec)");
  check(spec.traceHead === undefined || (Number.isInteger(spec.traceHead) && spec.traceHead >= 0 && spec.traceHead <= 1024), `traceHead must be a whole number of values from 0 to 1024, got ${show(spec.traceHead)}`);
  check(spec.traceSample === undefined || (Number.isInteger(spec.traceSample) && spec.traceSample >= 0 && spec.traceSample <= 1024), `traceSample must be a whole number of values from 0 to 1024, got ${show(spec.traceSample)}`);
  for (const f of spec.faults ?? []) {
    if (f.kind === 'crash') check(Number.isInteger(f.rank) && f.rank >= 0 && f.rank < spec.worldSize && Number.isInteger(f.atOp) && f.atOp >= 1, `crash fault needs a rank in [0, ${spec.worldSize}) and atOp >= 1, got ${JSON.stringify(f)}`);
    else if (f.kind === 'delay') check([f.src, f.dst].every((r) => Number.isInteger(r) && r >= 0 && r < spec.worldSize) && f.us >= 0, `delay fault needs src and dst ranks and us >= 0, got ${JSON.stringify(f)}`);
    else check(false, `unknown fault ${JSON.stringify(f)}; kinds are 'crash' and 'delay'`);
  }
}

/** The device options of a launch's ranks, from its spec (the same for every rank and backend). */
export function rankDeviceOptions(spec: LaunchSpec, device: DeviceModel | null): RankDeviceOptions {
  return {
    device,
    timeline: spec.timeline === true,
    markKey: spec.markKey,
    clockKey: spec.clockKey,
    peakTolerance: spec.peakTolerance,
    // No automatic points: marks, snapshots, the end and a full device still collect.
    ...(spec.memoryPoints === 'marks' ? { gcEveryBytes: Number.POSITIVE_INFINITY } : {}),
  };
}
