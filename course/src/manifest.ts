/**
 * The course manifest, `course/course.json`: the chapters in order, each with
 * its reading, exercises (by folder name, in order), knowledge check and
 * experiments. The manifest, not an exercise's id, gives the order, as
 * rustlings' info.toml does; ids stay stable names.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CourseManifestError, UnknownChapterError } from './errors.ts';
import { courseDirOf, REPO_ROOT } from './paths.ts';
import { describeErrors, validatorFor } from './validators.ts';

/** A chapter's knowledge check: the bank module and how an attempt is drawn and passed. */
export interface KnowledgeCheckRef {
  /** The bank module, relative to the course folder. */
  bank: string;
  /** Questions per attempt. */
  questions: number;
  /** The least score, in percent of the questions, that passes. */
  passPercent: number;
}

/** An experiment as the manifest lists it. */
export interface ExperimentRef {
  id: string;
  /** The experiment module, relative to the course folder. */
  module: string;
}

/** One chapter as course.json writes it. */
export interface ChapterManifest {
  id: string;
  title: string;
  status: 'complete' | 'outline';
  summary: string;
  reading: string;
  exercises: string[];
  knowledgeCheck?: KnowledgeCheckRef;
  experiments: ExperimentRef[];
}

/** course.json. */
export interface CourseManifest {
  $schema?: string;
  schemaVersion: 1;
  title: string;
  chapters: ChapterManifest[];
}

/** A chapter with its place in the course. */
export interface Chapter extends ChapterManifest {
  /** 1-based position in the course: `pnpm quiz <number>`. */
  number: number;
}

/** The loaded course. */
export interface Course {
  /** The repository root. */
  root: string;
  /** The course folder, which every path of the manifest is relative to. */
  dir: string;
  file: string;
  manifest: CourseManifest;
  chapters: Chapter[];
}

/** Reads and validates course.json of the repository at `root` (default: this one); throws CourseManifestError. */
export function loadCourse(root: string = REPO_ROOT): Course {
  const dir = courseDirOf(root);
  const file = join(dir, 'course.json');
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new CourseManifestError(file, [(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'the file does not exist' : `not JSON: ${(e as Error).message}`]);
  }
  const validate = validatorFor('course.schema.json');
  if (!validate(data)) throw new CourseManifestError(file, describeErrors(validate.errors));
  const manifest = data as CourseManifest;
  const ids = manifest.chapters.map((c) => c.id);
  const dup = ids.find((id, i) => ids.indexOf(id) !== i);
  if (dup) throw new CourseManifestError(file, [`two chapters have the id '${dup}': chapter ids must be unique`]);
  return { root, dir, file, manifest, chapters: manifest.chapters.map((c, i) => ({ ...c, number: i + 1 })) };
}

/** Chapter `n` ("1", 1) of `course`; throws UnknownChapterError. */
export function chapterOf(course: Course, n: string | number): Chapter {
  const k = typeof n === 'number' ? n : /^\d+$/.test(n.trim()) ? Number(n) : NaN;
  const c = course.chapters[k - 1];
  if (!c) throw new UnknownChapterError(n, course.chapters.length);
  return c;
}

/** The absolute path of a manifest path (relative to the course folder). */
export function coursePath(course: Course, rel: string): string {
  return join(course.dir, rel);
}
