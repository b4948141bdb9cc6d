/**
 * The floor of `pnpm bench grader`: an exercise's checks run on the
 * reference solution with no isolation at all (no private copy, no policy
 * check, no grading process, no permission model, no rubric), in the
 * calling process, with a worker pool of its own.
 */
import { join } from 'node:path';
import { WorkerPool } from '@dtlab/runtime';
import type { Exercise } from '../src/exercises.ts';
import { loadCheckModule, runCheck } from '../src/engine.ts';
import { SOLUTIONS_DIR, checkModulePath } from '../src/paths.ts';

/** Runs every public and hidden check of `exercise` on its reference solution; throws unless all pass. */
export async function runChecksInProcess(exercise: Exercise, seed: number): Promise<void> {
  const m = exercise.manifest;
  const pool = new WorkerPool({ memoryLimitMb: m.memoryLimitMb ?? 256 });
  const modules = {
    public: await loadCheckModule(checkModulePath(exercise.folder, 'public')),
    hidden: await loadCheckModule(checkModulePath(exercise.folder, 'hidden')),
  };
  const job = { folder: exercise.folder, manifest: m, submissionDir: join(SOLUTIONS_DIR, exercise.folder), seed, modules: { public: null, hidden: null }, checkIds: [] };
  const shared = new Map<string, Promise<unknown>>();
  try {
    for (const c of m.checks) {
      const r = await runCheck(job, m, c.id, c.visibility === 'public' ? modules.public : modules.hidden, pool, shared);
      if (r.status !== 'passed') throw new Error(`floor: check ${c.id} did not pass: ${r.message}`);
    }
  } finally {
    await pool.close();
  }
}
