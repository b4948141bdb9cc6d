/**
 * Planning a batch: for each student and exercise, where the work is, its
 * fingerprint, and whether it is already graded. A pair is done when its
 * rubric file exists, validates, and records the same submission SHA-256 and
 * grader version: then a rerun skips it, and `--force` regrades it. Nothing
 * else is kept between runs, so a batch killed at any moment resumes from
 * the rubric files alone.
 */
import { createHash } from 'node:crypto';
import { existsSync, lstatSync, readlinkSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import type { Exercise } from '../exercises.ts';
import { hashFile, hashTree, NO_SRC_SHA256, SUBMISSION_LIMITS } from '../submission.ts';
import { locateExercise, type StudentSource } from './discover.ts';
import { readRubricFile, rubricPath } from './layout.ts';
import { extractZip, ZipError, type UnzipLimits } from './unzip.ts';

/** The fingerprint recorded for an exercise missing from a student's work. */
export const MISSING_SHA256 = createHash('sha256').update('dtlab: no folder for this exercise').digest('hex');

/** One student and one exercise. */
export interface Pair {
  student: string;
  exercise: Exercise;
  /** Where its rubric goes. */
  rubricFile: string;
  /** The exercise folder in the student's (unpacked) work; null when missing or the zip was refused. */
  dir: string | null;
  /** What the rubric records as the submission's path: `alice/ex01-allreduce-mean` or `alice.zip:ex01-allreduce-mean`. */
  displayPath: string;
  sha256: string;
  /** Graded without running anything: the exercise is missing, or the zip was refused. */
  placeholder?: { flag: 'missing' | 'unreadable'; reason: string };
  /** Said about the student's zip (entries left out), for the rubric's notes. */
  notes: string[];
  /** Already graded with this fingerprint and grader version. */
  done: boolean;
}

/** A student's pairs. */
export interface StudentPlan {
  student: StudentSource;
  /** Where the student's work is (unpacked, for a zip) while the batch runs; null when it could not be read. */
  root: string | null;
  pairs: Pair[];
}

/** Options of planning. */
export interface PlanOptions {
  outDir: string;
  /** Where zips are unpacked (a private temporary folder of the batch). */
  unpackDir: string;
  graderVersion: string;
  force: boolean;
  unzip?: Partial<UnzipLimits>;
}

/**
 * The fingerprint of an exercise folder's `src/`, within the limits a
 * submission may have (SUBMISSION_LIMITS): a `src` that is a link is not
 * followed (its grading says so), and a tree over the limits is not read to
 * its end (its grading refuses it), so planning a class never hashes more
 * than a submission may hold.
 */
function srcHash(dir: string): string {
  const src = join(dir, 'src');
  const st = lstatSync(src, { throwIfNoEntry: false });
  if (!st) return NO_SRC_SHA256;
  if (st.isSymbolicLink()) return createHash('sha256').update(`dtlab: src is a link to ${readlinkSync(src)}`).digest('hex');
  if (!st.isDirectory()) return NO_SRC_SHA256;
  return hashTree(src, { maxBytes: SUBMISSION_LIMITS.totalBytes, maxFiles: SUBMISSION_LIMITS.files });
}

/**
 * True when `file` holds a valid rubric of this student, exercise, fingerprint
 * and grader version. A rubric whose status is 'error' (grading itself
 * failed) is never done: a rerun retries it.
 */
export function isDone(file: string, p: { student: string; exercise: Exercise; sha256: string }, version: string): boolean {
  const r = readRubricFile(file);
  return r !== null && r.status !== 'error' && r.submission.id === p.student && r.exercise === p.exercise.folder && r.submission.sha256 === p.sha256 && r.grader.version === version;
}

/** Unpacks (for a zip) and plans every exercise of one student. */
export async function planStudent(student: StudentSource, exercises: readonly Exercise[], opts: PlanOptions): Promise<StudentPlan> {
  if (!existsSync(student.path)) {
    // Listed, yet not there under that name: a name that is not valid UTF-8 comes back from the listing changed.
    throw new Error(`${basename(student.path)} cannot be opened under the name the folder listing gives (is its name valid UTF-8?): rename it and grade again`);
  }
  let root = student.path;
  let refused: string | null = null;
  let refusedSha = '';
  const notes: string[] = [];
  if (student.kind === 'zip') {
    root = join(opts.unpackDir, student.id);
    try {
      const z = await extractZip(student.path, root, opts.unzip);
      if (z.skipped.length) notes.push(`left out of ${basename(student.path)}: ${z.skipped.join('; ')}`);
    } catch (e) {
      if (!(e instanceof ZipError)) throw e;
      refused = e.reason;
      refusedSha = hashFile(student.path); // it exists: checked above
    }
  }
  const label = student.kind === 'zip' ? `${basename(student.path)}:` : `${basename(student.path)}/`;
  const pairs = exercises.map((exercise): Pair => {
    if (refused !== null) return placeholderPair(student, exercise, opts, notes, refusedSha, { flag: 'unreadable', reason: `the zip was refused: ${basename(student.path)} ${refused}` });
    const dir = locateExercise(root, exercise, exercises.length === 1);
    if (!dir) return placeholderPair(student, exercise, opts, notes, MISSING_SHA256, { flag: 'missing', reason: `no ${exercise.folder} (or ${exercise.manifest.id}) folder in the submission` });
    return withDone({ ...pairBase(student, exercise, opts, notes), dir, displayPath: `${label}${relative(root, dir) || '.'}`, sha256: srcHash(dir) }, opts);
  });
  return { student, root: refused === null ? root : null, pairs };
}

function pairBase(student: StudentSource, exercise: Exercise, opts: PlanOptions, notes: string[]) {
  return { student: student.id, exercise, rubricFile: rubricPath(opts.outDir, student.id, exercise.manifest.id), notes };
}

function withDone(pair: Omit<Pair, 'done'>, opts: PlanOptions): Pair {
  return { ...pair, done: !opts.force && isDone(pair.rubricFile, pair, opts.graderVersion) };
}

/** A pair with nothing to grade, recorded by a placeholder rubric that says why. */
function placeholderPair(student: StudentSource, exercise: Exercise, opts: PlanOptions, notes: string[], sha256: string, placeholder: NonNullable<Pair['placeholder']>): Pair {
  return withDone({ ...pairBase(student, exercise, opts, notes), dir: null, displayPath: basename(student.path), sha256, placeholder }, opts);
}

/**
 * The plan of a student whose submission could not even be planned (a file
 * over 2 GiB, a name the file system gives back differently...): every
 * exercise a placeholder flagged 'unreadable' that says why, so that the
 * batch goes on with the others.
 */
export function unreadablePlan(student: StudentSource, exercises: readonly Exercise[], opts: PlanOptions, error: unknown): StudentPlan {
  const why = error instanceof Error ? error.message : String(error);
  const sha256 = createHash('sha256').update(`dtlab: could not plan ${student.path}: ${why}`).digest('hex');
  const pairs = exercises.map((exercise) => placeholderPair(student, exercise, opts, [], sha256, { flag: 'unreadable', reason: `the submission could not be read: ${why}` }));
  return { student, root: null, pairs };
}
