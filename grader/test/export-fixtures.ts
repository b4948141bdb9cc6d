/**
 * Results folders for the export tests, made without grading: rubrics built
 * from an exercise's manifest with chosen verdicts, written (and so
 * validated) as grade:batch writes them, and knowledge-check records.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findExercise } from '../src/exercises.ts';
import { writeRubric, type Rubric, type RubricCheck } from '../src/rubric.ts';
import { rubricPath } from '../src/batch/layout.ts';
import { writeRecord } from '../src/batch/record.ts';
import { knowledgeCheckPath, writeKnowledgeCheck, type KnowledgeCheckRecord } from '../src/batch/knowledge-checks.ts';
import { placeholderRubric } from '../src/batch/placeholder.ts';

/** A check's verdict: its status, and optionally what a failure found. */
export type Verdict = RubricCheck['status'] | Partial<RubricCheck>;

/**
 * A rubric of exercise `name` for `student` in which every check passed
 * except those `verdicts` name; score and status follow from the checks.
 */
export function rubricOf(name: string, student: string, verdicts: Record<string, Verdict> = {}, extra: Partial<Rubric> = {}): Rubric {
  const ex = findExercise(name);
  const checks: RubricCheck[] = ex.manifest.checks.map((c) => {
    const v = verdicts[c.id] ?? 'passed';
    const base: RubricCheck = { id: c.id, name: c.title, visibility: c.visibility, score: 0, maxScore: c.points, status: 'passed', message: 'ok', durationMs: 120 };
    const check = typeof v === 'string' ? { ...base, status: v } : { ...base, ...v };
    return { ...check, score: check.status === 'passed' ? c.points : 0, message: check.status === 'passed' && typeof v === 'string' ? 'ok' : check.message };
  });
  const score = checks.reduce((s, c) => s + c.score, 0);
  const status = checks.some((c) => c.status === 'error') ? 'error' : checks.every((c) => c.status === 'passed') ? 'passed' : 'failed';
  return {
    schemaVersion: 1,
    exercise: ex.folder,
    submission: { id: student, path: `${student}/${ex.folder}`, sha256: 'a'.repeat(64) },
    grader: { version: '0.1.0+test', hiddenChecks: 'ran' },
    seed: 7,
    startedAt: '2026-12-01T10:00:00.000Z',
    durationMs: 2500,
    status,
    score,
    maxScore: checks.reduce((s, c) => s + c.maxScore, 0),
    checks,
    ...extra,
  };
}

/** The rubric grade:batch writes for an exercise with no folder in a student's work (score 0, flag missing). */
export function missingRubric(name: string, student: string): Rubric {
  return placeholderRubric({ exercise: findExercise(name), studentId: student, path: student, sha256: '0'.repeat(64), seed: 1, flag: 'missing', reason: 'no folder for it' });
}

/** A knowledge-check record of `chapter` for `student`. */
export function quizOf(student: string, chapter: number, score: number | null, title = 'Data parallelism'): KnowledgeCheckRecord {
  return {
    schemaVersion: 1,
    kind: 'knowledge-check',
    student,
    chapter,
    title,
    path: `${student}/.course/quiz-${chapter}.json`,
    status: score === null ? 'missing' : 'graded',
    score: score ?? 0,
    maxScore: 10,
    passed: (score ?? 0) >= 8,
    passPercent: 80,
    attempts: score === null ? 0 : 1,
    questions: [],
    problems: [],
    notes: [],
    grader: { version: '0.1.0+test' },
    gradedAt: '2026-12-01T10:00:00.000Z',
  };
}

/** A temporary results folder with `rubrics` and `quizzes` written into it, and its batch record. */
export function resultsFolder(rubrics: readonly Rubric[], quizzes: readonly KnowledgeCheckRecord[] = [], students?: string[]): { dir: string; dispose: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'dtlab-export-'));
  const all = students ?? [...new Set([...rubrics.map((r) => r.submission.id), ...quizzes.map((q) => q.student)])].sort();
  writeRecord(dir, { schemaVersion: 1, graderVersion: '0.1.0+test', shard: null, exercises: [...new Set(rubrics.map((r) => r.exercise))].sort(), students: all, problems: [] });
  for (const r of rubrics) writeRubric(rubricPath(dir, r.submission.id, r.exercise.slice(0, 4)), r);
  for (const q of quizzes) writeKnowledgeCheck(knowledgeCheckPath(dir, q.student, q.chapter), q);
  return { dir, dispose: () => rmSync(dir, { recursive: true, force: true }) };
}
