/**
 * A submission runs only in compiled form, confined (see the runtime's
 * precompiled-loader.cjs). When the grader cannot compile it ahead (esbuild
 * broken, say), grading fails closed: every check is an error that says why
 * and what to do, and the submission's code never runs.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it, vi } from 'vitest';
import { findExercise } from '../src/exercises.ts';
import { SOLUTIONS_DIR, WORK_DIR } from '../src/paths.ts';

vi.mock('../src/compile-cache.ts', async (importOriginal) => ({ ...(await importOriginal<typeof import('../src/compile-cache.ts')>()), precompiledFor: async () => null }));
const { gradeSubmission } = await import('../src/grade.ts');

it('grades nothing when the submission cannot be compiled ahead: an error for every check, saying why', async () => {
  const exercise = findExercise('ex01');
  const r = await gradeSubmission({ exercise, submissionDir: join(SOLUTIONS_DIR, exercise.folder), seed: 1 });
  expect(r.status).toBe('error');
  expect(r.score).toBe(0);
  // The grading process, started ahead to boot while the submission compiles, is stopped before it gets
  // a job: it never checks the policy, and nothing of the submission is read or run; its files are gone.
  expect(r.checks[0]).toMatchObject({ id: 'policy', status: 'skipped' });
  expect(readdirSync(WORK_DIR).filter((n) => n.includes(`-${process.pid}-`))).toEqual([]);
  for (const c of r.checks.slice(1)) {
    expect(c.status).toBe('error');
    expect(c.message).toMatch(/could not compile the course and the submission ahead \(esbuild failed\).*run `pnpm install` and grade again/);
  }
});
