/**
 * The knowledge checks of a class: each chapter's quiz, regraded from the
 * attempt file a student hands in (`.course/quiz-N.json`, written by
 * `pnpm quiz N`). The file holds seeds and answers, never a score a student
 * could set: every question is rebuilt from the seed with the course's own
 * banks, here, in the grader's process (never in a grading process: this is
 * the TA's course code, reading data), and the answers graded again
 * (@dtlab/course's regradeAttempt). The result is a record beside the
 * rubrics:
 *
 *   out/<student>/quiz<N>.json              the knowledge check record
 *   out/<student>/quiz<N>.gradescope.json   its Gradescope results (--gradescope)
 *
 * A student without an attempt file gets a record with status 'missing' and
 * no points, as a missing exercise does. Records are cheap to make, so every
 * run makes them again.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { loadCourse, regradeAttempt, type Chapter } from '@dtlab/course';
import type { Exercise } from '../exercises.ts';
import { writeAtomic } from '../atomic.ts';
import { bounded, jsonText, printable, TEXT_LIMITS } from '../text.ts';
import { schemaValidator } from '../validators.ts';
import { describeAjvErrors } from '../manifest.ts';

/** What a TA learns about one student's knowledge check of one chapter. */
export interface KnowledgeCheckRecord {
  schemaVersion: 1;
  kind: 'knowledge-check';
  student: string;
  chapter: number;
  title: string;
  /** Where the attempt file was, as the TA knows the submission (`alice/.course/quiz-1.json`). */
  path: string;
  /** graded: the file was read (its score may still be 0); missing: no file; invalid: it could not be read. */
  status: 'graded' | 'missing' | 'invalid';
  score: number;
  maxScore: number;
  passed: boolean;
  passPercent: number;
  /** Attempts in the file. */
  attempts: number;
  /** The best counted attempt's questions. */
  questions: { id: string; topic: string; status: string; answer: string | null; expected: string }[];
  /** Why an invalid file could not be read. */
  problems: string[];
  /** What differs from an honest file (ignored fields, edited variants, repeated seeds). */
  notes: string[];
  grader: { version: string };
  gradedAt: string;
}

/** `out/<student>/quiz<N>.json` */
export function knowledgeCheckPath(outDir: string, student: string, chapter: number): string {
  return join(outDir, student, `quiz${chapter}.json`);
}

/** `out/<student>/quiz<N>.gradescope.json` */
export function knowledgeCheckGradescopePath(outDir: string, student: string, chapter: number): string {
  return join(outDir, student, `quiz${chapter}.gradescope.json`);
}

/** The gradebook column of chapter `n`'s knowledge check: `quiz1`. */
export const knowledgeCheckColumn = (chapter: number) => `quiz${chapter}`;

/** The chapters whose knowledge checks a batch grades: those with a check that hold one of `exercises`. */
export function chaptersToCheck(exercises: readonly Exercise[]): Chapter[] {
  const folders = new Set(exercises.map((e) => e.folder));
  return loadCourse().chapters.filter((c) => c.knowledgeCheck && c.exercises.some((f) => folders.has(f)));
}

const SKIP = new Set(['node_modules', '__MACOSX', '.git']);

/** A student's `.course/` folder: at their work's top or inside up to two wrapping folders, the shallowest first. */
export function locateCourseFolder(root: string): string | null {
  let level = [root];
  for (let depth = 0; depth <= 2 && level.length; depth++) {
    const next: string[] = [];
    for (const d of level) {
      const here = join(d, '.course');
      if (existsSync(here) && statSync(here).isDirectory()) return here;
      let entries;
      try {
        entries = readdirSync(d, { withFileTypes: true });
      } catch {
        continue;
      }
      for (const e of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) if (e.isDirectory() && !e.name.startsWith('.') && !SKIP.has(e.name)) next.push(join(d, e.name));
    }
    level = next;
  }
  return null;
}

/**
 * Regrades student `student`'s knowledge checks of `chapters` from the
 * attempt files in their work at `root` (null: nothing could be read, so
 * every check is missing). `label` names the work as the TA knows it.
 */
export async function gradeKnowledgeChecks(root: string | null, student: string, label: string, chapters: readonly Chapter[], graderVersion: string): Promise<KnowledgeCheckRecord[]> {
  const folder = root ? locateCourseFolder(root) : null;
  const out: KnowledgeCheckRecord[] = [];
  for (const chapter of chapters) {
    const check = chapter.knowledgeCheck!;
    const file = folder ? join(folder, `quiz-${chapter.number}.json`) : null;
    const r = file ? await regradeAttempt(file, { chapter: chapter.number }) : null;
    const shown = file && root ? `${label}${relative(root, file)}` : `${label}.course/quiz-${chapter.number}.json`;
    out.push({
      schemaVersion: 1,
      kind: 'knowledge-check',
      student: bounded(student, TEXT_LIMITS.name),
      chapter: chapter.number,
      title: chapter.title,
      path: bounded(shown, TEXT_LIMITS.path),
      status: r?.status ?? 'missing',
      score: r?.score ?? 0,
      maxScore: r?.maxScore ?? check.questions,
      passed: r?.passed ?? false,
      passPercent: check.passPercent,
      attempts: r?.attempts ?? 0,
      // The answers are the student's text: bounded.
      questions: (r?.questions ?? []).map((q) => ({ id: q.id, topic: q.topic, status: q.status, answer: q.answer === null ? null : bounded(q.answer, TEXT_LIMITS.value), expected: q.expected })),
      problems: (r?.problems ?? []).map((p) => bounded(p, TEXT_LIMITS.note)),
      notes: (r?.notes ?? []).slice(0, 20).map((n) => bounded(n, TEXT_LIMITS.note)),
      grader: { version: graderVersion },
      gradedAt: new Date().toISOString(),
    });
  }
  return out;
}

/** Throws unless `r` matches grader/schema/knowledge-check.schema.json. */
export function validateKnowledgeCheck(r: unknown): asserts r is KnowledgeCheckRecord {
  const validate = schemaValidator('knowledge-check.schema.json');
  if (!validate(r)) throw new Error(`BUG: the knowledge check record does not match grader/schema/knowledge-check.schema.json:\n${describeAjvErrors(validate.errors).join('\n')}`);
}

/** Validates `r` and writes it atomically. */
export function writeKnowledgeCheck(file: string, r: KnowledgeCheckRecord): void {
  validateKnowledgeCheck(r);
  writeAtomic(file, jsonText(r));
}

/** The record in `file` if it exists and validates, else null. */
export function readKnowledgeCheck(file: string): KnowledgeCheckRecord | null {
  try {
    const r = JSON.parse(readFileSync(file, 'utf8')) as unknown;
    validateKnowledgeCheck(r);
    return r;
  } catch {
    return null;
  }
}

/** One record found in an output folder. */
export interface FoundKnowledgeCheck {
  student: string;
  chapter: number;
  record: KnowledgeCheckRecord | null;
}

/** Every `out/<student>/quizN.json`, by student then chapter. */
export function listKnowledgeChecks(outDir: string): FoundKnowledgeCheck[] {
  if (!existsSync(outDir)) return [];
  const out: FoundKnowledgeCheck[] = [];
  for (const d of readdirSync(outDir, { withFileTypes: true }).filter((e) => e.isDirectory() && !e.name.startsWith('.')).map((e) => e.name).sort()) {
    for (const f of readdirSync(join(outDir, d)).sort()) {
      const m = /^quiz(\d+)\.json$/.exec(f);
      if (m) out.push({ student: d, chapter: Number(m[1]), record: readKnowledgeCheck(join(outDir, d, f)) });
    }
  }
  return out;
}

/** Gradescope's results.json for a knowledge check: one test per question of the best attempt. */
export function knowledgeCheckToGradescope(r: KnowledgeCheckRecord): Record<string, unknown> {
  const text = (s: string) => printable(s, true);
  const why = r.status === 'missing' ? 'no attempt file was handed in' : r.status === 'invalid' ? `the attempt file could not be read: ${r.problems.join('; ')}` : `${r.attempts} attempt${r.attempts === 1 ? '' : 's'}; the best is counted`;
  return {
    score: r.score,
    output: text(`knowledge check, chapter ${r.chapter} (${r.title}): ${r.score}/${r.maxScore}, ${r.passed ? 'passed' : 'not passed'} (pass: ${r.passPercent}%); ${why}`),
    tests: r.questions.map((q, i) => ({
      name: text(`question ${i + 1}: ${q.id}`),
      score: q.status === 'correct' ? 1 : 0,
      max_score: 1,
      status: q.status === 'correct' ? 'passed' : 'failed',
      output: text(`your answer: ${q.answer ?? '(none)'}; the answer: ${q.expected}`),
      visibility: 'after_published',
    })),
  };
}
