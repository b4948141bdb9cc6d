/**
 * The trust boundary: whatever a submission does, grading ends with a valid
 * rubric and a readable verdict, on time.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { gradeSubmission } from '../src/grade.ts';
import { findExercise } from '../src/exercises.ts';
import { validateRubric } from '../src/rubric.ts';

const fixtures = join(import.meta.dirname, 'fixtures', 'ex01');
const base = findExercise('ex01');
// A short per-check limit so that the test does not wait the exercise's full limit.
const exercise = { ...base, manifest: { ...base.manifest, timeLimits: { checkMs: 3000, totalMs: 60_000 } } };

describe('grading a misbehaving submission', () => {
  it('stops a synchronous infinite loop in every rank and reports a timeout', async () => {
    const t0 = Date.now();
    const r = await gradeSubmission({ exercise, submissionDir: join(fixtures, 'infinite-loop'), seed: 1, hidden: false });
    validateRubric(r);
    expect(r.checks.filter((c) => c.id !== 'policy').every((c) => c.status === 'timeout')).toBe(true);
    expect(r.checks[1]!.message).toMatch(/timed out/);
    expect(r.score).toBe(0);
    expect(Date.now() - t0).toBeLessThan(30_000);
  });

  it('names the rank that threw and its error', async () => {
    const r = await gradeSubmission({ exercise, submissionDir: join(fixtures, 'throws-in-rank'), seed: 1, hidden: false });
    validateRubric(r);
    const two = r.checks.find((c) => c.id === 'two-ranks')!;
    expect(two.status).toBe('failed');
    expect(two.message).toMatch(/rank 1 failed: Error: rank 1 gave up/);
    expect(two.divergence?.rank).toBe(1);
  });

  it('does not run a submission that breaks the policy, and says where', async () => {
    const r = await gradeSubmission({ exercise, submissionDir: join(fixtures, 'imports-fs'), seed: 1 });
    validateRubric(r);
    const policy = r.checks.find((c) => c.id === 'policy')!;
    expect(policy.status).toBe('failed');
    expect(policy.message).toMatch(/src\/allreduce-mean\.ts:2:\d+ import of 'node:fs' is not allowed/);
    expect(r.checks.filter((c) => c.id !== 'policy').every((c) => c.status === 'skipped')).toBe(true);
    expect(r.status).toBe('failed');
  });

  it('grades a folder without src/ as a failed submission, not a crash', async () => {
    const r = await gradeSubmission({ exercise, submissionDir: join(fixtures, 'no-src'), seed: 1 });
    validateRubric(r);
    expect(r.status).toBe('failed');
    expect(r.checks[0]!.message).toMatch(/has no src\/ folder/);
  });

  it('leaves the student folder untouched and records its fingerprint', async () => {
    const r = await gradeSubmission({ exercise, submissionDir: base.dir, seed: 1, hidden: false });
    expect(r.submission.sha256).toMatch(/^[0-9a-f]{64}$/);
    const again = await gradeSubmission({ exercise, submissionDir: base.dir, seed: 2, hidden: false });
    expect(again.submission.sha256).toBe(r.submission.sha256);
  });
});
