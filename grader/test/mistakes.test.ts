/**
 * The mistakes corpus (test/fixtures/mistakes/<exercise-folder>/<name>/):
 * for each exercise, submissions that make the mistakes a real student
 * makes, or try what a student after a higher score would try, each with its
 * expected verdict in `verdict.json`. Every exercise's corpus is graded in one
 * batch with all its checks, hidden ones included, beside the reference
 * solution; each verdict must come out as written. They show that the checks
 * tell right from wrong on code written without them in view, and give
 * partial credit where the lesson is partly learnt.
 *
 * verdict.json:
 *   { "why": "what the submission does, in a sentence",
 *     "status": "passed" | "failed",
 *     "score": 7,                      (or "max")
 *     "checks": { "check-id": "failed", ... },   (statuses of named checks)
 *     "message": "a regular expression the rubric's messages and notes must match",
 *     "flags": ["policy"] }           (flags the rubric must carry; optional)
 */
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listExercises } from '../src/exercises.ts';
import { SOLUTIONS_DIR } from '../src/paths.ts';
import { runBatch } from '../src/batch/run.ts';
import { readRubricFile, rubricPath } from '../src/batch/layout.ts';
import type { Rubric, RubricFlag } from '../src/rubric.ts';

const ROOT = join(import.meta.dirname, 'fixtures', 'mistakes');

/** A fixture's expected verdict (see the top of this file). */
interface Verdict {
  why: string;
  status: Rubric['status'];
  score: number | 'max';
  checks?: Record<string, string>;
  message: string;
  flags?: RubricFlag[];
}

const text = (r: Rubric) => [...r.checks.map((c) => c.message), ...(r.notes ?? [])].join('\n');

const corpora = listExercises().filter((e) => existsSync(join(ROOT, e.folder)));

describe.each(corpora.map((e) => [e.folder, e] as const))('the mistakes corpus of %s', (folder, exercise) => {
  const dir = join(ROOT, folder);
  const names = readdirSync(dir).filter((n) => existsSync(join(dir, n, 'verdict.json'))).sort();
  const verdicts = new Map(names.map((n) => [n, JSON.parse(readFileSync(join(dir, n, 'verdict.json'), 'utf8')) as Verdict]));
  let subs: string;
  let out: string;

  beforeAll(async () => {
    // The fixtures and the reference solution, as a class: each student folder holds src/ at its top.
    subs = mkdtempSync(join(tmpdir(), `dtlab-mistakes-${exercise.manifest.id}-`));
    out = mkdtempSync(join(tmpdir(), `dtlab-mistakes-${exercise.manifest.id}-out-`));
    for (const n of names) cpSync(join(dir, n, 'src'), join(subs, n, 'src'), { recursive: true });
    cpSync(join(SOLUTIONS_DIR, folder, 'src'), join(subs, 'reference', 'src'), { recursive: true });
    await runBatch({ submissions: subs, out, exercises: [exercise], jobs: 2, seed: 11, typeCheck: false });
  }, 600_000);
  afterAll(() => {
    rmSync(subs, { recursive: true, force: true });
    rmSync(out, { recursive: true, force: true });
  });

  it('grades the reference solution to the maximum beside them', () => {
    const r = readRubricFile(rubricPath(out, 'reference', exercise.manifest.id))!;
    expect(r.status, text(r)).toBe('passed');
    expect(r.score).toBe(r.maxScore);
  });

  it.each(names)('%s', (name) => {
    const v = verdicts.get(name)!;
    const r = readRubricFile(rubricPath(out, name, exercise.manifest.id));
    expect(r, `${name}: no valid rubric`).not.toBeNull();
    const rubric = r!;
    const summary = rubric.checks.map((c) => `${c.id}:${c.status}`).join(' ');
    expect(rubric.status, `${name} (${v.why}): status; checks ${summary}`).toBe(v.status);
    expect(rubric.score, `${name} (${v.why}): score; checks ${summary}`).toBe(v.score === 'max' ? rubric.maxScore : v.score);
    for (const [id, status] of Object.entries(v.checks ?? {})) expect(rubric.checks.find((c) => c.id === id)?.status, `${name}: check ${id}`).toBe(status);
    expect(text(rubric), `${name}: message`).toMatch(new RegExp(v.message, 's'));
    for (const f of v.flags ?? []) expect(rubric.flags ?? [], `${name}: flags`).toContain(f);
    // Whatever else, never a grader bug: a submission cannot make the grader look at fault.
    expect(rubric.status, `${name}: a submission caused a grading error`).not.toBe('error');
  });
});
