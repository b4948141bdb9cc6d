/**
 * Batch grading over students who hand in quiz attempts: each chapter's
 * knowledge check is regraded from the attempt file (`.course/quiz-N.json`),
 * never from a score in it; the gradebook gets a column per chapter's check
 * after the exercises, a student without an attempt gets 0 and the flag
 * `quiz1:missing`, as a missing exercise does, and Gradescope gets a file per
 * check.
 */
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { drawQuiz, formatNumber, loadBank, loadCourse, type Attempt, type DrawnQuestion } from '@dtlab/course';
import { findExercise, type Exercise } from '../src/exercises.ts';
import { SOLUTIONS_DIR } from '../src/paths.ts';
import { runBatch } from '../src/batch/run.ts';
import { knowledgeCheckPath, readKnowledgeCheck } from '../src/batch/knowledge-checks.ts';

const base = findExercise('ex01');
// Public checks only: this test is about the knowledge checks beside the exercise.
const exercise: Exercise = { ...base, manifest: { ...base.manifest, checks: base.manifest.checks.filter((c) => c.visibility === 'public') } };

/** What a student types for `d`: the right answer, or a well-formed wrong one. */
function answerTo(d: DrawnQuestion, right: boolean): string {
  if (d.presented.kind === 'choice') return d.presented.options.find((o) => o.correct === right)!.label;
  return formatNumber(right ? d.presented.answer : d.presented.answer * 3 + 1);
}

/** An honest attempt file of chapter 1 with `rightCount` of its 10 questions right. */
async function attemptFile(seed: number, rightCount: number): Promise<Record<string, unknown>> {
  const course = loadCourse();
  const bank = await loadBank(course, course.chapters[0]!);
  const drawn = drawQuiz(bank, seed, { count: 10 });
  const t = '2026-12-01T10:00:00.000Z';
  const attempt: Attempt = { seed, bankRevision: bank.revision, mode: 'answers-file', startedAt: t, finishedAt: t, questions: drawn.map((d, i) => ({ id: d.question.id, variant: d.variant, answer: answerTo(d, i < rightCount), answeredAt: t })) };
  return { schemaVersion: 1, chapter: 1, attempts: [attempt] };
}

let subs: string;
let out: string;
beforeAll(async () => {
  subs = mkdtempSync(join(tmpdir(), 'dtlab-quiz-subs-'));
  out = mkdtempSync(join(tmpdir(), 'dtlab-quiz-out-'));
  for (const s of ['alice', 'bob', 'carol']) cpSync(join(SOLUTIONS_DIR, base.folder, 'src'), join(subs, s, base.folder, 'src'), { recursive: true });
  // alice: 9 of 10 right. carol: 4 of 10, with a score of 10/10 written in by hand. bob: no attempt.
  const write = (student: string, data: unknown) => {
    mkdirSync(join(subs, student, '.course'), { recursive: true });
    writeFileSync(join(subs, student, '.course', 'quiz-1.json'), JSON.stringify(data, null, 2));
  };
  write('alice', await attemptFile(5, 9));
  write('carol', { ...(await attemptFile(6, 4)), score: 10, passed: true });
  await runBatch({ submissions: subs, out, exercises: [exercise], jobs: 2, seed: 3, gradescope: true, typeCheck: false });
}, 240_000);
afterAll(() => {
  rmSync(subs, { recursive: true, force: true });
  rmSync(out, { recursive: true, force: true });
});

describe('knowledge checks in a batch', () => {
  it('regrades each attempt from its seed and answers, whatever score the file claims', () => {
    const alice = readKnowledgeCheck(knowledgeCheckPath(out, 'alice', 1))!;
    expect(alice).toMatchObject({ status: 'graded', score: 9, maxScore: 10, passed: true, attempts: 1, path: 'alice/.course/quiz-1.json' });
    const carol = readKnowledgeCheck(knowledgeCheckPath(out, 'carol', 1))!;
    expect(carol).toMatchObject({ status: 'graded', score: 4, passed: false });
    expect(carol.notes.join('\n')).toMatch(/ignored field/);
  });

  it('treats a student without an attempt like a missing exercise: 0 points and a flag', () => {
    expect(readKnowledgeCheck(knowledgeCheckPath(out, 'bob', 1))).toMatchObject({ status: 'missing', score: 0, passed: false });
  });

  it('puts a column per chapter check in the gradebook after the exercises, in the totals and the summary', () => {
    const rows = readFileSync(join(out, 'gradebook.csv'), 'utf8').trim().split('\n');
    expect(rows[0]).toBe('student,ex01,quiz1,total,max,status,flags');
    expect(rows).toContain('alice,4,9,13,14,complete,');
    expect(rows).toContain('bob,4,0,4,14,complete,quiz1:missing');
    expect(rows).toContain('carol,4,4,8,14,complete,');
    const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8'));
    expect(summary.knowledgeChecks.quiz1).toMatchObject({ chapter: 1, graded: 2, passed: 1, missing: 1, invalid: 0, maxScore: 10, mean: 6.5 });
  });

  it('writes a Gradescope file per knowledge check, a test per question', () => {
    const gs = JSON.parse(readFileSync(join(out, 'alice', 'quiz1.gradescope.json'), 'utf8'));
    expect(gs.score).toBe(9);
    expect(gs.tests).toHaveLength(10);
    expect(gs.tests.filter((t: { status: string }) => t.status === 'passed')).toHaveLength(9);
  });
});
