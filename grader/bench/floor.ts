/**
 * The floor of `pnpm bench grader` and `pnpm bench batch`: an exercise's
 * checks run on a submission with no isolation at all (no private copy, no
 * policy check, no grading process, no permission model, no rubric), in the
 * calling process, with a worker pool of its own. Its workers load the
 * course and the submission compiled ahead, as a grading's do (the course
 * bundle, compile-cache.ts), and are reused from launch to launch: the
 * fastest way to run the checks, which is what a floor must be.
 */
import { join } from 'node:path';
import { WorkerPool } from '@dtlab/runtime';
import type { Exercise } from '../src/exercises.ts';
import { loadCheckModule, runCheck } from '../src/engine.ts';
import { precompiledFor } from '../src/compile-cache.ts';
import { SOLUTIONS_DIR, checkModulePath } from '../src/paths.ts';
import type { CheckResult } from '../src/protocol.ts';

/** Runs every public and hidden check of `exercise` on the submission in `submissionDir` (its folder, holding src/); returns each check's result. */
export async function runChecksOn(exercise: Exercise, submissionDir: string, seed: number): Promise<CheckResult[]> {
  const m = exercise.manifest;
  const precompiled = await precompiledFor(submissionDir, null);
  const pool = new WorkerPool({ memoryLimitMb: m.memoryLimitMb ?? 256, ...(precompiled ? { precompiled } : {}) });
  const modules = {
    public: await loadCheckModule(checkModulePath(exercise.folder, 'public')),
    hidden: await loadCheckModule(checkModulePath(exercise.folder, 'hidden')),
  };
  const job = { folder: exercise.folder, manifest: m, submissionDir, seed, modules: { public: null, hidden: null }, checkIds: [] };
  const shared = new Map<string, Promise<unknown>>();
  const results: CheckResult[] = [];
  try {
    for (const c of m.checks) results.push(await runCheck(job, m, c.id, c.visibility === 'public' ? modules.public : modules.hidden, pool, shared));
  } finally {
    await pool.close();
  }
  return results;
}

/** Runs every public and hidden check of `exercise` on its reference solution; throws unless all pass. */
export async function runChecksInProcess(exercise: Exercise, seed: number): Promise<void> {
  for (const r of await runChecksOn(exercise, join(SOLUTIONS_DIR, exercise.folder), seed)) {
    if (r.status !== 'passed') throw new Error(`floor: check ${r.id} did not pass: ${r.message}`);
  }
}
