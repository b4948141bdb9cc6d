/**
 * The grades of a class as the exporters see them: read from a results
 * folder of `pnpm grade:batch` (or `grade:merge`), from the rubric files and
 * the knowledge-check records, which are the source of truth (each read
 * through its schema validator; the gradebook CSV is never read).
 *
 * One column per exercise and per chapter's knowledge check (the latter for
 * chapters someone handed an attempt in for, as the gradebook does). A cell
 * is a score, or blank with the reason: a number is only exported when the
 * grader stands behind it. A pair with no folder for the exercise (flag
 * `missing`) scores 0, as in the gradebook; a zip that was refused, a grading
 * error, a rubric that does not validate and a pair not graded yet are blank,
 * for a TA to look at.
 */
import { existsSync } from 'node:fs';
import { findExercise } from '../exercises.ts';
import { listRubrics } from '../batch/layout.ts';
import { listKnowledgeChecks, knowledgeCheckColumn } from '../batch/knowledge-checks.ts';
import { readRecord } from '../batch/record.ts';
import type { Rubric } from '../rubric.ts';
import { UserError } from '../user-error.ts';

/** One exported column. */
export interface GradeColumn {
  /** `ex01` or `quiz1`: what a roster column is recognised by. */
  key: string;
  kind: 'exercise' | 'knowledge-check';
  /** What a new column is called: `ex01 All-reduce mean`. */
  title: string;
  /** The most points: the largest maxScore of its rubrics or records. */
  maxScore: number;
}

/** One student's grade in one column. */
export type GradeCell = { score: number; note?: string } | { score: null; reason: string };

/** The class's grades by student id (a submission folder's name) and column key. */
export interface ClassGrades {
  dir: string;
  columns: GradeColumn[];
  students: Map<string, Map<string, GradeCell>>;
  /** What in the folder could not be used. */
  problems: string[];
}

/** A results folder that is not one. */
export class ResultsError extends UserError {
  override name = 'ResultsError';
}

const exerciseKey = (folder: string) => folder.slice(0, 4);

const titles = new Map<string, string>();
function exerciseTitle(folder: string): string {
  let t = titles.get(folder);
  if (t === undefined) {
    try {
      t = `${exerciseKey(folder)} ${findExercise(folder).manifest.title}`;
    } catch {
      t = folder; // an exercise this checkout does not have: its folder name says enough
    }
    titles.set(folder, t);
  }
  return t;
}

function rubricCell(r: Rubric): GradeCell {
  if (r.flags?.includes('unreadable')) return { score: null, reason: 'the submission could not be unpacked (see its rubric)' };
  if (r.status === 'error') return { score: null, reason: 'grading itself failed (see its rubric; a rerun of grade:batch regrades it)' };
  if (r.flags?.includes('missing')) return { score: r.score, note: 'no folder for this exercise: 0' };
  return { score: r.score };
}

/** Reads the grades in results folder `dir`; `only` keeps these exercise ids (`ex01`). */
export function collectGrades(dir: string, only?: readonly string[]): ClassGrades {
  if (!existsSync(dir)) throw new ResultsError(`${dir}: no such folder. Give the --out folder of pnpm grade:batch (or grade:merge)`);
  const record = readRecord(dir);
  const problems: string[] = [];
  const keep = (key: string) => !only || only.includes(key);
  const students = new Map<string, Map<string, GradeCell>>();
  const cells = (s: string) => students.get(s) ?? students.set(s, new Map()).get(s)!;
  const columns = new Map<string, GradeColumn>();
  const column = (key: string, kind: GradeColumn['kind'], title: string, max: number) => {
    const c = columns.get(key) ?? { key, kind, title, maxScore: 0 };
    c.maxScore = Math.max(c.maxScore, max);
    columns.set(key, c);
  };

  for (const folder of record?.exercises ?? []) if (keep(exerciseKey(folder))) column(exerciseKey(folder), 'exercise', exerciseTitle(folder), 0);
  for (const f of listRubrics(dir)) {
    if (!keep(f.exerciseId)) continue;
    const r = f.rubric;
    if (!r) {
      problems.push(`${f.student}/${f.exerciseId}.json does not validate against the rubric schema: left blank (a rerun of grade:batch regrades it)`);
      cells(f.student).set(f.exerciseId, { score: null, reason: 'its rubric file does not validate' });
      continue;
    }
    if (r.submission.id !== f.student || exerciseKey(r.exercise) !== f.exerciseId) {
      problems.push(`${f.student}/${f.exerciseId}.json holds the rubric of ${r.submission.id}/${r.exercise}: left blank`);
      cells(f.student).set(f.exerciseId, { score: null, reason: 'its rubric file is of another pair' });
      continue;
    }
    column(f.exerciseId, 'exercise', exerciseTitle(r.exercise), r.maxScore);
    cells(f.student).set(f.exerciseId, rubricCell(r));
  }

  const checks = listKnowledgeChecks(dir);
  // A chapter's column once anyone handed an attempt in: a class that does its quizzes elsewhere gets none.
  for (const f of checks) if (f.record && f.record.status !== 'missing') column(knowledgeCheckColumn(f.chapter), 'knowledge-check', `${knowledgeCheckColumn(f.chapter)} Knowledge check: ${f.record.title}`, f.record.maxScore);
  for (const f of checks) {
    const key = knowledgeCheckColumn(f.chapter);
    if (!columns.has(key)) continue;
    const k = f.record;
    if (!k || k.student !== f.student || k.chapter !== f.chapter) {
      problems.push(`${f.student}/quiz${f.chapter}.json is not a valid knowledge-check record of that student and chapter: left blank`);
      cells(f.student).set(key, { score: null, reason: 'its knowledge-check record does not validate' });
      continue;
    }
    columns.get(key)!.maxScore = Math.max(columns.get(key)!.maxScore, k.maxScore);
    if (k.status === 'invalid') cells(f.student).set(key, { score: null, reason: `the attempt file could not be read: ${k.problems.join('; ')}` });
    else cells(f.student).set(key, k.status === 'missing' ? { score: 0, note: 'no attempt handed in: 0' } : { score: k.score });
  }

  // Students the batch expects whose pairs are not graded yet: blank, never 0.
  for (const s of record?.students ?? []) cells(s);
  for (const [, mine] of students) for (const c of columns.values()) if (!mine.has(c.key)) mine.set(c.key, { score: null, reason: 'not graded yet (rerun grade:batch to finish)' });

  const order = (c: GradeColumn) => (c.kind === 'exercise' ? 0 : 1);
  const sorted = [...columns.values()].sort((a, b) => order(a) - order(b) || Number(a.key.replace(/\D/g, '')) - Number(b.key.replace(/\D/g, '')));
  if (sorted.length === 0) throw new ResultsError(`${dir} holds no rubric${only ? ` of ${only.join(', ')}` : ''}: is it the --out folder of pnpm grade:batch?`);
  return { dir, columns: sorted, students, problems };
}

/** A score as a gradebook cell: plain decimal, at most 4 places (no exponent, no locale). */
export function scoreText(score: number): string {
  return String(Math.round(score * 10_000) / 10_000);
}
