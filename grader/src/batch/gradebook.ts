/**
 * The gradebook and the summary, rebuilt from the rubric files every time
 * (never updated in place), so that whatever happened to the batch they
 * count each graded pair exactly once.
 *
 * gradebook.csv: `student, ex01, ex02, ..., quiz1, quiz2, ..., total, max,
 * status, flags` (a column per knowledge check after the exercises, for a
 * chapter at least one student of the class handed an attempt in for); an
 * empty cell is a pair not graded yet; `status` is `complete` or `incomplete`;
 * `flags` lists `exNN:flag` (missing, timeout, type-errors, grading-error...).
 *
 * summary.json: counts, the score distribution of each exercise, the slowest
 * and the failing submissions, and the problems found on the way.
 */
import { join } from 'node:path';
import type { Rubric } from '../rubric.ts';
import { writeAtomic } from '../rubric.ts';
import { listRubrics, type FoundRubric } from './layout.ts';
import { readRecord, type BatchRecord } from './record.ts';
import { knowledgeCheckColumn, listKnowledgeChecks, type FoundKnowledgeCheck, type KnowledgeCheckRecord } from './knowledge-checks.ts';
import { bounded, jsonText, printable } from '../text.ts';

/** One student's row. */
export interface GradebookRow {
  student: string;
  /** By exercise id (`ex01`): the rubric, or null when not graded (yet). */
  rubrics: Record<string, Rubric | null>;
  /** By knowledge-check column (`quiz1`): the record, or null when not graded (yet). */
  knowledgeChecks: Record<string, KnowledgeCheckRecord | null>;
  total: number;
  max: number;
  status: 'complete' | 'incomplete';
  flags: string[];
}

/** Statistics of one exercise over the graded students. */
export interface ExerciseSummary {
  graded: number;
  passed: number;
  failed: number;
  error: number;
  /** Pairs with no folder for the exercise: not in graded, failed or the statistics. */
  missing: number;
  /** Pairs whose zip was refused: not in graded, failed or the statistics either. */
  unreadable: number;
  maxScore: number;
  mean: number | null;
  median: number | null;
  min: number | null;
  max: number | null;
  /** How many students got each score, lowest score first. */
  distribution: { score: number; count: number }[];
  /** How many rubrics carry each flag. */
  flags: Record<string, number>;
}

/** summary.json */
export interface Summary {
  schemaVersion: 1;
  graderVersions: string[];
  shard: string;
  students: number;
  pairs: { expected: number; graded: number; pending: number };
  status: { passed: number; failed: number; error: number; missing: number; unreadable: number };
  exercises: Record<string, ExerciseSummary>;
  /** By column (`quiz1`). */
  knowledgeChecks: Record<string, KnowledgeCheckSummary>;
  /** The ten slowest gradings. */
  slowest: { student: string; exercise: string; durationMs: number; status: string }[];
  /** Every graded pair that did not pass (missing exercises excepted), errors first. */
  failing: { student: string; exercise: string; status: string; score: number; maxScore: number; flags: string[]; reason: string }[];
  problems: string[];
}

/** Statistics of one chapter's knowledge check over the students. */
export interface KnowledgeCheckSummary {
  chapter: number;
  /** Students whose attempt file was read (score 0 included). */
  graded: number;
  passed: number;
  missing: number;
  invalid: number;
  maxScore: number;
  mean: number | null;
  median: number | null;
}

/** The whole gradebook. */
export interface Gradebook {
  exercises: string[];
  /** Knowledge-check columns, `quiz1`, ..., after the exercises. */
  knowledgeChecks: string[];
  rows: GradebookRow[];
  summary: Summary;
}

const round = (x: number) => Math.round(x * 100) / 100;
const exerciseId = (folder: string) => folder.slice(0, 4);

/**
 * The first reason a rubric did not pass, in one line: the first check that
 * failed, with its whole message (lines joined by ' · ': a policy failure's
 * first line only announces the violations that follow it), bounded.
 */
function reason(r: Rubric): string {
  const c = r.checks.find((x) => x.status !== 'passed' && x.status !== 'skipped') ?? r.checks.find((x) => x.status !== 'passed');
  const text = c ? `${c.id}: ${c.status}: ${c.message.split('\n').filter(Boolean).join(' · ')}` : (r.notes?.[0] ?? r.status);
  return bounded(text, 400);
}

/** A pair with nothing of the student's graded: no folder for the exercise, or a zip that was refused. */
function placeholder(r: Rubric): boolean {
  return r.flags?.includes('missing') === true || r.flags?.includes('unreadable') === true;
}

function rowFlags(ex: string, r: Rubric): string[] {
  const flags: string[] = [...(r.flags ?? [])];
  if (r.status === 'error') flags.push('grading-error');
  return flags.map((f) => `${ex}:${f}`);
}

function stats(scores: number[]): Pick<ExerciseSummary, 'mean' | 'median' | 'min' | 'max'> {
  if (!scores.length) return { mean: null, median: null, min: null, max: null };
  const s = [...scores].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return { mean: round(s.reduce((a, b) => a + b, 0) / s.length), median: s.length % 2 ? s[mid]! : round((s[mid - 1]! + s[mid]!) / 2), min: s[0]!, max: s[s.length - 1]! };
}

/**
 * Builds the gradebook from rubric files (and knowledge-check records) found
 * in an output folder, and its record. The steps: sort the rubrics by
 * student (refusing those that do not belong where they were found), choose
 * the columns, make each student's row, then summarise each exercise and the
 * batch.
 */
export function buildGradebook(found: readonly FoundRubric[], record: BatchRecord | null, foundChecks: readonly FoundKnowledgeCheck[] = []): Gradebook {
  const problems = [...(record?.problems ?? [])];
  const byStudent = rubricsByStudent(found, problems);
  const checks = knowledgeChecksByStudent(foundChecks, problems);
  const { exercises, quizColumns, students } = columns(found, record, foundChecks);
  const all = [...byStudent.values()].flatMap((m) => [...m.values()]);
  const maxOf = maxScores(all);
  const rows = students.map((student) => studentRow(student, byStudent.get(student) ?? new Map(), checks.get(student), exercises, quizColumns, maxOf));
  const exerciseSummaries: Record<string, ExerciseSummary> = {};
  for (const ex of exercises) exerciseSummaries[ex] = exerciseSummary(rows.map((row) => row.rubrics[ex]).filter((r): r is Rubric => r !== null), maxOf.get(ex) ?? 0);
  const graded = rows.flatMap((row) => exercises.flatMap((ex) => (row.rubrics[ex] ? [{ student: row.student, ex, r: row.rubrics[ex]! }] : [])));
  const summary: Summary = {
    schemaVersion: 1,
    graderVersions: [...new Set(all.map((r) => r.grader.version))].sort(),
    shard: shardLabel(record),
    students: students.length,
    // graded counts every pair with a rubric (placeholders included); status splits them the way each exercise's summary does.
    pairs: { expected: students.length * exercises.length, graded: graded.length, pending: students.length * exercises.length - graded.length },
    status: statusCounts(all),
    exercises: exerciseSummaries,
    knowledgeChecks: knowledgeCheckSummaries(rows, quizColumns),
    slowest: slowestPairs(graded),
    failing: failingPairs(graded),
    problems,
  };
  return { exercises, knowledgeChecks: quizColumns, rows, summary };
}

/** One graded pair, as the summary's lists take it. */
interface GradedPair {
  student: string;
  ex: string;
  r: Rubric;
}

/** The rubrics by student and exercise id; one that does not validate or belongs to another pair is a problem noted, not counted. */
function rubricsByStudent(found: readonly FoundRubric[], problems: string[]): Map<string, Map<string, Rubric>> {
  const byStudent = new Map<string, Map<string, Rubric>>();
  for (const f of found) {
    const r = f.rubric;
    if (!r) {
      problems.push(`${f.student}/${f.exerciseId}.json does not validate against the rubric schema: not counted (a rerun regrades it)`);
      continue;
    }
    if (r.submission.id !== f.student || exerciseId(r.exercise) !== f.exerciseId) {
      problems.push(`${f.student}/${f.exerciseId}.json holds the rubric of ${r.submission.id}/${r.exercise}: not counted (a rerun regrades it)`);
      continue;
    }
    if (!byStudent.has(f.student)) byStudent.set(f.student, new Map());
    byStudent.get(f.student)!.set(f.exerciseId, r);
  }
  return byStudent;
}

/** The exercise and knowledge-check columns and the students (rows), from the record and what was found. */
function columns(found: readonly FoundRubric[], record: BatchRecord | null, foundChecks: readonly FoundKnowledgeCheck[]): { exercises: string[]; quizColumns: string[]; students: string[] } {
  const exercises = [...new Set([...(record?.exercises ?? []).map(exerciseId), ...found.map((f) => f.exerciseId)])].sort();
  // A chapter's column once anyone in the class handed in an attempt: a class that does its quizzes elsewhere gets none.
  const attempted = foundChecks.filter((f) => f.record?.status !== 'missing');
  const quizColumns = [...new Set(attempted.map((f) => knowledgeCheckColumn(f.chapter)))].sort((a, b) => Number(a.slice(4)) - Number(b.slice(4)));
  const students = [...new Set([...(record?.students ?? []), ...found.map((f) => f.student), ...foundChecks.map((f) => f.student)])].sort();
  return { exercises, quizColumns, students };
}

/** Each exercise's maximum score, as its rubrics say (the largest, should graders of two versions have left rubrics). */
function maxScores(all: readonly Rubric[]): Map<string, number> {
  const maxOf = new Map<string, number>();
  for (const r of all) maxOf.set(exerciseId(r.exercise), Math.max(maxOf.get(exerciseId(r.exercise)) ?? 0, r.maxScore));
  return maxOf;
}

/** One student's row: a pair not graded yet counts its maximum and no score, and leaves the row incomplete. */
function studentRow(
  student: string,
  mine: ReadonlyMap<string, Rubric>,
  myChecks: ReadonlyMap<string, KnowledgeCheckRecord> | undefined,
  exercises: readonly string[],
  quizColumns: readonly string[],
  maxOf: ReadonlyMap<string, number>,
): GradebookRow {
  const rubrics: Record<string, Rubric | null> = {};
  let total = 0;
  let max = 0;
  const flags: string[] = [];
  for (const ex of exercises) {
    const r = mine.get(ex) ?? null;
    rubrics[ex] = r;
    if (r) {
      total += r.score;
      max += r.maxScore;
      flags.push(...rowFlags(ex, r));
    } else max += maxOf.get(ex) ?? 0;
  }
  const knowledgeChecks: Record<string, KnowledgeCheckRecord | null> = {};
  for (const col of quizColumns) {
    const k = myChecks?.get(col) ?? null;
    knowledgeChecks[col] = k;
    if (k) {
      total += k.score;
      max += k.maxScore;
      if (k.status !== 'graded') flags.push(`${col}:${k.status}`);
    }
  }
  const complete = exercises.every((ex) => rubrics[ex]) && quizColumns.every((q) => knowledgeChecks[q]);
  return { student, rubrics, knowledgeChecks, total: round(total), max: round(max), status: complete ? 'complete' : 'incomplete', flags };
}

/** One exercise's statistics over the rubrics present for it. */
function exerciseSummary(present: readonly Rubric[], maxScore: number): ExerciseSummary {
  // Statistics of what students handed in: a missing or refused submission is counted as such, not as graded and failed.
  const rs = present.filter((r) => !placeholder(r));
  const scores = rs.map((r) => r.score);
  const counts = new Map<number, number>();
  for (const s of scores) counts.set(s, (counts.get(s) ?? 0) + 1);
  const flagCounts: Record<string, number> = {};
  for (const r of present) for (const f of r.flags ?? []) flagCounts[f] = (flagCounts[f] ?? 0) + 1;
  return {
    graded: rs.length,
    passed: rs.filter((r) => r.status === 'passed').length,
    failed: rs.filter((r) => r.status === 'failed').length,
    error: rs.filter((r) => r.status === 'error').length,
    missing: present.filter((r) => r.flags?.includes('missing')).length,
    unreadable: present.filter((r) => r.flags?.includes('unreadable')).length,
    maxScore,
    ...stats(scores),
    distribution: [...counts].sort((a, b) => a[0] - b[0]).map(([score, count]) => ({ score, count })),
    flags: flagCounts,
  };
}

/** The batch's counts by status; a placeholder (missing, unreadable) is counted as that, not as failed. */
function statusCounts(all: readonly Rubric[]): Summary['status'] {
  return {
    passed: all.filter((r) => r.status === 'passed').length,
    failed: all.filter((r) => r.status === 'failed' && !placeholder(r)).length,
    error: all.filter((r) => r.status === 'error').length,
    missing: all.filter((r) => r.flags?.includes('missing')).length,
    unreadable: all.filter((r) => r.flags?.includes('unreadable')).length,
  };
}

/** Every graded pair that did not pass (missing exercises excepted), grading errors first. */
function failingPairs(graded: readonly GradedPair[]): Summary['failing'] {
  return graded
    .filter((g) => g.r.status !== 'passed' && !g.r.flags?.includes('missing'))
    .sort((a, b) => (a.r.status === b.r.status ? 0 : a.r.status === 'error' ? -1 : b.r.status === 'error' ? 1 : 0))
    .map((g) => ({ student: g.student, exercise: g.ex, status: g.r.status, score: g.r.score, maxScore: g.r.maxScore, flags: g.r.flags ?? [], reason: reason(g.r) }));
}

/** The ten slowest gradings of something a student handed in. */
function slowestPairs(graded: readonly GradedPair[]): Summary['slowest'] {
  return graded
    .filter((g) => !g.r.flags?.includes('missing') && !g.r.flags?.includes('unreadable'))
    .sort((a, b) => b.r.durationMs - a.r.durationMs)
    .slice(0, 10)
    .map((g) => ({ student: g.student, exercise: g.ex, durationMs: g.r.durationMs, status: g.r.status }));
}

/** Which part of the class the folder holds: `all`, `i/n`, or the shards it was merged from. */
function shardLabel(record: BatchRecord | null): string {
  if (record?.mergedFrom) return `merged: ${record.mergedFrom.map((s) => `${s.index}/${s.count}`).join(' + ') || 'unsharded folders'}`;
  return record?.shard ? `${record.shard.index}/${record.shard.count}` : 'all';
}

/** The knowledge-check records by student and column; a record that does not validate is a problem noted. */
function knowledgeChecksByStudent(found: readonly FoundKnowledgeCheck[], problems: string[]): Map<string, Map<string, KnowledgeCheckRecord>> {
  const by = new Map<string, Map<string, KnowledgeCheckRecord>>();
  for (const f of found) {
    if (!f.record || f.record.student !== f.student || f.record.chapter !== f.chapter) {
      problems.push(`${f.student}/quiz${f.chapter}.json is not a valid knowledge-check record of that student and chapter: not counted (a rerun makes it again)`);
      continue;
    }
    if (!by.has(f.student)) by.set(f.student, new Map());
    by.get(f.student)!.set(knowledgeCheckColumn(f.chapter), f.record);
  }
  return by;
}

/** Each knowledge-check column's statistics, over the students whose attempt file was read. */
function knowledgeCheckSummaries(rows: readonly GradebookRow[], columns: readonly string[]): Record<string, KnowledgeCheckSummary> {
  const out: Record<string, KnowledgeCheckSummary> = {};
  for (const col of columns) {
    const all = rows.map((r) => r.knowledgeChecks[col]).filter((k): k is KnowledgeCheckRecord => k !== null);
    const graded = all.filter((k) => k.status === 'graded');
    const { mean, median } = stats(graded.map((k) => k.score));
    out[col] = {
      chapter: Number(col.slice(4)),
      graded: graded.length,
      passed: graded.filter((k) => k.passed).length,
      missing: all.filter((k) => k.status === 'missing').length,
      invalid: all.filter((k) => k.status === 'invalid').length,
      maxScore: Math.max(0, ...all.map((k) => k.maxScore)),
      mean,
      median,
    };
  }
  return out;
}

/** One CSV field: quoted when needed, and never read as a formula by a spreadsheet. */
export function csvField(value: string | number): string {
  // A name is a student's folder name: no control character of it reaches a TA's terminal or spreadsheet.
  let s = typeof value === 'string' ? printable(value) : String(value);
  // A spreadsheet reads a cell that starts (after spaces) with one of these as a formula.
  if (typeof value === 'string' && /^[\s]*[=+\-@\t\r]/.test(s)) s = `'${s}`;
  // Quoted: separators (',' and, in some locales, ';') and anything a reader may take for a line end.
  return /[",;\r\n\u0085\u2028\u2029]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** gradebook.csv's text. */
export function gradebookCsv(g: Gradebook): string {
  const lines = [['student', ...g.exercises, ...g.knowledgeChecks, 'total', 'max', 'status', 'flags'].map(csvField).join(',')];
  for (const row of g.rows) {
    const cells = [...g.exercises.map((ex) => (row.rubrics[ex] ? csvField(row.rubrics[ex]!.score) : '')), ...g.knowledgeChecks.map((q) => (row.knowledgeChecks[q] ? csvField(row.knowledgeChecks[q]!.score) : ''))];
    lines.push([csvField(row.student), ...cells, csvField(row.total), csvField(row.max), row.status, csvField(row.flags.join(' '))].join(','));
  }
  return lines.join('\n') + '\n';
}

/** Rebuilds gradebook.csv and summary.json in `outDir` from its rubric files, atomically; returns the gradebook. */
export function writeGradebook(outDir: string): Gradebook {
  const g = buildGradebook(listRubrics(outDir), readRecord(outDir), listKnowledgeChecks(outDir));
  writeAtomic(join(outDir, 'gradebook.csv'), gradebookCsv(g));
  writeAtomic(join(outDir, 'summary.json'), jsonText(g.summary));
  return g;
}
