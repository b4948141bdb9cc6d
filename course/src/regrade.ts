/**
 * `regradeAttempt(file)`: the score of a student's knowledge check, for the
 * gradebook, recomputed from their attempt file. It bounds the file's size
 * before parsing it, validates it against course/schema/attempt.schema.json,
 * rebuilds every attempt's questions and variants from its seed with the
 * course's own bank (never anything from the student's repository), and
 * grades the recorded answers. The best counted attempt is the score.
 */
import { existsSync, lstatSync } from 'node:fs';
import { basename } from 'node:path';
import { MAX_ATTEMPT_FILE_BYTES, readBounded, type AttemptsFile } from './attempt.ts';
import { gradeAttempt, passes, type AttemptResult, type QuestionResult } from './grade-attempt.ts';
import { chapterOf, loadCourse } from './manifest.ts';
import { loadBank } from './modules.ts';
import { REPO_ROOT } from './paths.ts';
import { describeErrors, validatorFor } from './validators.ts';

/** The regraded knowledge check of one student and one chapter. */
export interface RegradeResult {
  file: string;
  chapter: number | null;
  /** graded: the file was read (its score may be 0); missing: there is no file (score 0, like a missing exercise); invalid: it could not be read (score 0, see problems). */
  status: 'graded' | 'missing' | 'invalid';
  /** The best counted attempt's score (0 if none). */
  score: number;
  maxScore: number;
  passed: boolean;
  /** Attempts in the file. */
  attempts: number;
  /** Position of the best counted attempt in the file, or null. */
  best: number | null;
  /** The best attempt's questions. */
  questions: QuestionResult[];
  /** Every attempt, graded. */
  attemptResults: AttemptResult[];
  /** Why the file could not be graded (status 'invalid'). */
  problems: string[];
  /** What differs from an honest file: ignored fields, edited variants, repeated seeds. */
  notes: string[];
}

/** Options of `regradeAttempt`. */
export interface RegradeOptions {
  /** The chapter the file must be for; default: N of a file named quiz-N.json, else the file's own chapter field. */
  chapter?: number;
  /** The repository whose course and banks grade the attempt (default: this one). */
  root?: string;
  /** Largest file read (default MAX_ATTEMPT_FILE_BYTES). */
  maxBytes?: number;
}

/** Paths of properties that `stripped` lost relative to `original` (the fields the schema does not allow). */
function removedPaths(original: unknown, stripped: unknown, at = ''): string[] {
  if (original === null || typeof original !== 'object' || stripped === null || typeof stripped !== 'object') return [];
  const out: string[] = [];
  for (const key of Object.keys(original)) {
    const path = Array.isArray(original) ? `${at}[${key}]` : at ? `${at}.${key}` : key;
    if (!(key in stripped)) out.push(path);
    else out.push(...removedPaths((original as Record<string, unknown>)[key], (stripped as Record<string, unknown>)[key], path));
  }
  return out;
}

/** Regrades the attempt file `file`. Never throws for anything in the file; throws only if the course itself is broken. */
export async function regradeAttempt(file: string, opts: RegradeOptions = {}): Promise<RegradeResult> {
  const course = loadCourse(opts.root ?? REPO_ROOT);
  const fromName = /^quiz-(\d+)\.json$/.exec(basename(file));
  let chapterNo: number | null = opts.chapter ?? (fromName ? Number(fromName[1]) : null);
  const empty = (status: RegradeResult['status'], problems: string[], notes: string[] = []): RegradeResult => {
    const ch = chapterNo === null ? undefined : course.chapters[chapterNo - 1];
    return { file, chapter: chapterNo, status, score: 0, maxScore: ch?.knowledgeCheck?.questions ?? 0, passed: false, attempts: 0, best: null, questions: [], attemptResults: [], problems, notes };
  };
  if (!existsSync(file) && !lstatSync(file, { throwIfNoEntry: false })) return empty('missing', []);
  // A link could point anywhere on the grading machine: an attempt file is a plain file or nothing.
  if (!lstatSync(file).isFile()) return empty('invalid', ['not a regular file (a folder, or a symbolic link)']);
  const maxBytes = opts.maxBytes ?? MAX_ATTEMPT_FILE_BYTES;
  const read = readBounded(file, maxBytes);
  if ('tooLarge' in read) return empty('invalid', [`the file is larger than ${maxBytes} bytes, more than any honest attempt file; it was not read`]);
  let data: unknown;
  try {
    data = JSON.parse(read.text);
  } catch {
    // Not the parser's message: it quotes the start of the file, which need not be shown to anyone.
    return empty('invalid', ['not JSON: the file does not parse']);
  }
  const stripped = structuredClone(data);
  const validate = validatorFor('attempt.schema.json', { strip: true });
  if (!validate(stripped)) return empty('invalid', describeErrors(validate.errors).map((p) => `does not match the attempt format: ${p}`));
  const notes = removedPaths(data, stripped).map((p) => `ignored field ${p}: an attempt file holds no such thing, and its score is always recomputed`);
  const parsed = stripped as AttemptsFile;
  if (chapterNo === null) chapterNo = parsed.chapter;
  if (parsed.chapter !== chapterNo) return empty('invalid', [`the file says chapter ${parsed.chapter}, but it is graded as chapter ${chapterNo}'s knowledge check`], notes);
  const chapter = course.chapters[chapterNo - 1];
  if (!chapter?.knowledgeCheck) return empty('invalid', [chapter ? `chapter ${chapterNo} has no knowledge check` : `the course has no chapter ${chapterNo}`], notes);
  const spec = { bank: await loadBank(course, chapterOf(course, chapterNo)), questions: chapter.knowledgeCheck.questions, passPercent: chapter.knowledgeCheck.passPercent };
  const seen = new Set<number>();
  const results = parsed.attempts.map((a, i) => {
    const r = gradeAttempt(a, spec, i);
    if (seen.has(a.seed)) {
      r.counted = false;
      r.notes.push(`seed ${a.seed} was already used by an earlier attempt, whose answers were then shown: this one does not count`);
    }
    seen.add(a.seed);
    return r;
  });
  const counted = results.filter((r) => r.counted);
  const best = counted.reduce<AttemptResult | null>((b, r) => (b === null || r.score > b.score ? r : b), null);
  for (const r of results) notes.push(...r.notes.map((n) => `attempt ${r.index + 1}: ${n}`));
  const score = best?.score ?? 0;
  return {
    file,
    chapter: chapterNo,
    status: 'graded',
    score,
    maxScore: spec.questions,
    passed: passes(score, spec.questions, spec.passPercent),
    attempts: results.length,
    best: best?.index ?? null,
    questions: best?.questions ?? [],
    attemptResults: results,
    problems: [],
    notes,
  };
}
