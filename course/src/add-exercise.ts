/**
 * `addExerciseToChapter(root, chapter, folder)`: what `pnpm kit new
 * --chapter N` calls once it has scaffolded exercises/<folder>/, so that the
 * new exercise is listed at the end of chapter N's exercises in
 * course/course.json. The file is rewritten in the layout it is kept in
 * (two-space JSON, one chapter field per line), atomically.
 */
import { existsSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CourseEditError } from './errors.ts';
import { loadCourse, type CourseManifest } from './manifest.ts';
import { describeErrors, validatorFor } from './validators.ts';

/** What changed. */
export interface AddExerciseResult {
  /** The course.json written. */
  file: string;
  chapter: number;
  /** The chapter's exercises afterwards, in order. */
  exercises: string[];
  /** False when the exercise was already the chapter's (nothing was written). */
  changed: boolean;
}

/**
 * course.json as it is kept: two-space indentation, but short arrays and
 * objects (exercise lists, a knowledge check, an experiment) on one line,
 * as an author would write them.
 */
export function formatCourseJson(m: CourseManifest): string {
  const inline = (v: unknown) => JSON.stringify(v, null, 1).replace(/\n\s*/g, ' ').replace(/\[ /g, '[').replace(/ \]/g, ']');
  const chapters = m.chapters.map((c) => {
    const lines = Object.entries(c).map(([k, v]) => {
      if (k === 'experiments') return `      "experiments": ${(v as unknown[]).length ? `[${(v as unknown[]).map(inline).join(', ')}]` : '[]'}`;
      return `      ${JSON.stringify(k)}: ${typeof v === 'object' ? inline(v) : JSON.stringify(v)}`;
    });
    return `    {\n${lines.join(',\n')}\n    }`;
  });
  const head = Object.entries(m)
    .filter(([k]) => k !== 'chapters')
    .map(([k, v]) => `  ${JSON.stringify(k)}: ${JSON.stringify(v)}`);
  return `{\n${head.join(',\n')},\n  "chapters": [\n${chapters.join(',\n')}\n  ]\n}\n`;
}

/** Adds exercises/<folder> at the end of chapter `chapter` (1-based) of the course at `root`. */
export function addExerciseToChapter(root: string, chapter: number, folder: string): AddExerciseResult {
  const course = loadCourse(root);
  if (!/^ex\d{2}-[a-z0-9]+(-[a-z0-9]+)*$/.test(folder)) throw new CourseEditError(folder, chapter, `'${folder}' is not an exercise folder name (exNN-slug)`);
  if (!existsSync(join(root, 'exercises', folder, 'exercise.json'))) throw new CourseEditError(folder, chapter, `exercises/${folder}/exercise.json does not exist: scaffold the exercise first, then add it to its chapter`);
  const target = course.chapters[chapter - 1];
  if (!Number.isInteger(chapter) || !target) throw new CourseEditError(folder, chapter, `the course has chapters 1 to ${course.chapters.length}, not ${chapter}`);
  const other = course.chapters.find((c) => c !== target && c.exercises.includes(folder));
  if (other) throw new CourseEditError(folder, chapter, `${folder} is already in chapter ${other.number} (${other.title}): an exercise belongs to exactly one chapter; move it by editing course/course.json`);
  if (target.exercises.includes(folder)) return { file: course.file, chapter, exercises: [...target.exercises], changed: false };
  const manifest: CourseManifest = structuredClone(course.manifest);
  manifest.chapters[chapter - 1]!.exercises.push(folder);
  const validate = validatorFor('course.schema.json');
  if (!validate(manifest)) throw new CourseEditError(folder, chapter, `BUG: the edited manifest is not valid: ${describeErrors(validate.errors).join('; ')}`);
  const tmp = `${course.file}.${process.pid}.tmp`;
  writeFileSync(tmp, formatCourseJson(manifest));
  renameSync(tmp, course.file);
  return { file: course.file, chapter, exercises: manifest.chapters[chapter - 1]!.exercises, changed: true };
}
