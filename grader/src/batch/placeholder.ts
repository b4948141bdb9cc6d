/**
 * Rubrics for pairs that are not run: an exercise missing from a student's
 * work, or a zip that was refused. Each is a complete, valid rubric with
 * score 0, every check skipped with the reason, and a flag, so that the
 * gradebook, Gradescope and a resumed batch treat it like any other.
 */
import type { Exercise } from '../exercises.ts';
import { checkModulePath } from '../paths.ts';
import type { Rubric, RubricFlag } from '../rubric.ts';
import { skippedCheck } from '../grade.ts';
import { graderVersion } from '../version.ts';

/** Builds a rubric with every check of `exercise` skipped for `reason`. */
export function placeholderRubric(opts: { exercise: Exercise; studentId: string; path: string; sha256: string; seed: number; flag: RubricFlag; reason: string; notes?: string[] }): Rubric {
  const { manifest, folder } = opts.exercise;
  const hidden = checkModulePath(folder, 'hidden') !== null;
  const checks = manifest.checks
    .filter((c) => c.visibility === 'public' || hidden)
    .map((c) => skippedCheck(c, `not run: ${opts.reason}`));
  return {
    schemaVersion: 1,
    exercise: folder,
    submission: { id: opts.studentId, path: opts.path, sha256: opts.sha256 },
    grader: { version: graderVersion(), hiddenChecks: hidden ? 'ran' : 'absent' },
    seed: opts.seed,
    startedAt: new Date().toISOString(),
    durationMs: 0,
    status: 'failed',
    score: 0,
    maxScore: checks.reduce((s, c) => s + c.maxScore, 0),
    notes: [opts.reason, ...(opts.notes ?? [])],
    flags: [opts.flag],
    checks,
  };
}
