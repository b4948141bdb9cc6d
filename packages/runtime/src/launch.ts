/**
 * `launch(spec)`: runs a rank program on `worldSize` ranks and reports how
 * each rank ended, every message, and per-rank traffic and virtual time.
 * It never throws because a rank failed: failures are data in the result.
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { LaunchSpecError } from './errors.ts';
import { validateSpec } from './launch-spec.ts';
import { refuseIfConfined } from './loading/confined.ts';
import { runInline } from './backends/inline.ts';
import { runWorkers } from './backends/workers.ts';
import { WorkerPool } from './backends/pool.ts';
import { resolveDevice } from './device/presets.ts';
import { cleanupRegistry, fullCollection, setDeterministicFlags } from './device/collect.ts';
import { rankScope } from './device/scope.ts';
import type { LaunchResult, LaunchSpec, ProgramRef, RankProgram } from './types.ts';

// Before any rank worker starts: the V8 settings under which memory points are reproducible (device/collect.ts).
setDeterministicFlags();

/** Default wall-clock limit of a launch, in milliseconds. */
export const DEFAULT_TIMEOUT_MS = 60_000;
/** Default heap limit per rank worker, in MB. */
export const DEFAULT_MEMORY_LIMIT_MB = 512;

async function loadProgram(ref: ProgramRef): Promise<RankProgram> {
  const mod = (await import(pathToFileURL(resolve(ref.module)).href)) as Record<string, unknown>;
  const name = ref.export ?? 'default';
  const fn = mod[name];
  if (typeof fn !== 'function') throw new LaunchSpecError(`launch: ${ref.module} has no exported function '${name}'`);
  return fn as RankProgram;
}

/**
 * Runs `spec.program` on every rank and resolves when all ranks have ended
 * (or the timeout stopped them). Throws only for an invalid spec.
 */
export async function launch(spec: LaunchSpec): Promise<LaunchResult> {
  refuseIfConfined('launch ranks'); // a program loaded by path would not be confined
  validateSpec(spec, (p) => p instanceof WorkerPool);
  const device = spec.device === undefined ? null : resolveDevice(spec.device);
  const full = { ...spec, timeoutMs: spec.timeoutMs ?? DEFAULT_TIMEOUT_MS, seed: spec.seed ?? 0, memoryLimitMb: spec.memoryLimitMb ?? DEFAULT_MEMORY_LIMIT_MB };
  if ((spec.backend ?? 'inline') === 'workers') return runWorkers(full, spec.program as ProgramRef, device);
  const program = typeof spec.program === 'function' ? spec.program : await loadProgram(spec.program);
  // Inline ranks share this thread: the meter follows each one's async context.
  rankScope();
  return runInline(full, program, device ? { device, gc: fullCollection(), registry: cleanupRegistry() } : { device });
}
