/**
 * Where things are: the course folder, the repository it belongs to, and
 * what the course writes and reads in a student's repository.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** This package's folder: `course/`. */
export const COURSE_DIR = join(dirname(fileURLToPath(import.meta.url)), '..');
/** The repository root (the folder holding `course/` and `exercises/`). */
export const REPO_ROOT = join(COURSE_DIR, '..');
/** The course folder of the repository at `root`. */
export function courseDirOf(root: string): string {
  return join(root, 'course');
}

/**
 * A student's records, all inside their repository so that they are
 * committed and handed in with the exercises: rubrics in `.grades/`,
 * knowledge-check attempts in `.course/`, experiment notes in `notes/`.
 */
export interface StudentPaths {
  root: string;
  /** `.grades/<id>.json`: the last rubric of each exercise (written by `pnpm grade`). */
  grades: string;
  /** `.course/quiz-<N>.json`: every attempt at chapter N's knowledge check. */
  course: string;
  /** `notes/experiments.md`: one entry per experiment run. */
  notes: string;
}

/** The record paths of the student repository at `root`. */
export function studentPaths(root: string): StudentPaths {
  return { root, grades: join(root, '.grades'), course: join(root, '.course'), notes: join(root, 'notes', 'experiments.md') };
}

/** `.course/quiz-<chapter>.json` in the student repository at `root`. */
export function attemptFile(root: string, chapter: number): string {
  return join(studentPaths(root).course, `quiz-${chapter}.json`);
}
