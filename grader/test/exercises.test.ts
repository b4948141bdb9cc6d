/**
 * The curriculum grades as it should, end to end (isolated grading process,
 * rank workers, hidden checks): for every exercise and three seeds, the
 * starter scores below the maximum and fails a named check, the reference
 * solution scores the maximum, and every rubric validates against the schema.
 */
import { join } from 'node:path';
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { gradeSubmission } from '../src/grade.ts';
import { listExercises } from '../src/exercises.ts';
import { SOLUTIONS_DIR } from '../src/paths.ts';
import { validateRubric } from '../src/rubric.ts';

const SEEDS = [1, 2, 3];

for (const exercise of listExercises()) {
  describe(exercise.folder, () => {
    for (const seed of SEEDS) {
      it(`the starter scores below the maximum and fails a named check (seed ${seed})`, async () => {
        const r = await gradeSubmission({ exercise, submissionDir: exercise.dir, seed });
        validateRubric(r);
        expect(r.status).toBe('failed');
        expect(r.score).toBeLessThan(r.maxScore);
        const failed = r.checks.filter((c) => c.status === 'failed').map((c) => c.id);
        expect(failed.length, 'at least one check must fail by name').toBeGreaterThan(0);
        for (const id of failed) expect(exercise.manifest.checks.map((c) => c.id)).toContain(id);
        expect(r.checks.find((c) => c.id === 'policy')?.status).toBe('passed');
      });

      it(`the reference solution scores the maximum (seed ${seed})`, async () => {
        const dir = join(SOLUTIONS_DIR, exercise.folder);
        expect(existsSync(dir), `solutions/${exercise.folder} is missing`).toBe(true);
        const r = await gradeSubmission({ exercise, submissionDir: dir, seed });
        validateRubric(r);
        const notPassed = r.checks.filter((c) => c.status !== 'passed').map((c) => `${c.id}: ${c.status}: ${c.message}`);
        expect(notPassed).toEqual([]);
        expect(r.status).toBe('passed');
        expect(r.score).toBe(r.maxScore);
        expect(r.maxScore).toBe(exercise.manifest.checks.reduce((s, c) => s + c.points, 0));
        expect(r.grader.hiddenChecks).toBe('ran');
      });
    }
  });
}
