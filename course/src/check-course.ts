/**
 * `checkCourse(root)`: the course checks itself, as rustlings' `dev check`
 * does for its curriculum. Every exercise folder is in exactly one chapter,
 * every path of the manifest resolves, every reading has its sections,
 * every bank and experiment is valid (each question is generated and graded
 * for many seeds), and nothing the student export ships points at a
 * solution or a hidden check. Findings are data; `pnpm kit check` prints
 * them with its own.
 */
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { checkBank } from './check/bank.ts';
import { checkExperiment } from './check/experiment.ts';
import { checkLeaks } from './check/leaks.ts';
import { checkReading } from './check/reading.ts';
import { Findings, type CourseFinding } from './check/findings.ts';
import { CourseManifestError } from './errors.ts';
import { coursePath, loadCourse, type Course } from './manifest.ts';
import { loadBank, loadExperiment } from './modules.ts';
import { REPO_ROOT } from './paths.ts';

/** The findings' shape, re-exported for callers of checkCourse. */
export type { CourseFinding, CourseCheckName } from './check/findings.ts';

/** Options of `checkCourse`. */
export interface CheckCourseOptions {
  /** Seeds each question is generated with (default 50). */
  seeds?: number;
  /** Also run every experiment once and check its prediction options against the rows (a few seconds). */
  runExperiments?: boolean;
}

/** The exercise folders of the repository (exNN-slug under exercises/). */
function exerciseFolders(root: string): string[] {
  const dir = join(root, 'exercises');
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((n) => /^ex\d{2}-[a-z0-9]+(-[a-z0-9]+)*$/.test(n) && statSync(join(dir, n)).isDirectory())
    .sort();
}

function checkExercises(course: Course, f: Findings): void {
  const owners = new Map<string, number[]>();
  for (const c of course.chapters) {
    for (const folder of c.exercises) {
      owners.set(folder, [...(owners.get(folder) ?? []), c.number]);
      const manifest = join(course.root, 'exercises', folder, 'exercise.json');
      if (!existsSync(manifest)) {
        f.error('exercises', c.number, folder, `chapter ${c.number} lists ${folder}, but exercises/${folder}/exercise.json does not exist: fix the name in course/course.json or create the exercise (pnpm kit new)`);
        continue;
      }
      try {
        const m = JSON.parse(readFileSync(manifest, 'utf8')) as { chapter?: unknown };
        if (typeof m.chapter === 'number' && m.chapter !== c.number) f.warn('exercises', c.number, folder, `exercises/${folder}/exercise.json says chapter ${m.chapter}, but course/course.json puts it in chapter ${c.number}: the course manifest decides; make the exercise's chapter field agree`);
      } catch {
        // a broken exercise manifest is the kit's exercise check to report
      }
    }
  }
  for (const [folder, chapters] of owners) {
    if (chapters.length > 1) f.error('exercises', chapters[0]!, folder, `${folder} is listed in chapters ${chapters.join(' and ')}: an exercise belongs to exactly one chapter`);
  }
  for (const folder of exerciseFolders(course.root)) {
    if (!owners.has(folder)) f.error('exercises', null, folder, `exercises/${folder} is in no chapter: add it to a chapter's "exercises" in course/course.json (pnpm kit new --chapter N does this for new exercises)`);
  }
}

/** Checks the course of the repository at `root`; resolves to every finding (empty when all is well). */
export async function checkCourse(root: string = REPO_ROOT, opts: CheckCourseOptions = {}): Promise<CourseFinding[]> {
  const f = new Findings();
  let course: Course;
  try {
    course = loadCourse(root);
  } catch (e) {
    if (!(e instanceof CourseManifestError)) throw e;
    for (const p of e.problems) f.error('manifest', null, null, `course/course.json: ${p}`);
    return f.list;
  }
  checkExercises(course, f);
  const experimentIds = new Map<string, number>();
  for (const c of course.chapters) {
    checkReading(course, c, f);
    if (c.knowledgeCheck) {
      const file = coursePath(course, c.knowledgeCheck.bank);
      try {
        checkBank(await loadBank(course, c), c, f, { seeds: opts.seeds ?? 50 });
      } catch (e) {
        f.error('bank', c.number, c.knowledgeCheck.bank, `${existsSync(file) ? '' : 'missing: '}${(e as Error).message}`);
      }
    }
    for (const ref of c.experiments) {
      if (experimentIds.has(ref.id)) f.error('experiment', c.number, ref.id, `experiment id '${ref.id}' is also used in chapter ${experimentIds.get(ref.id)}: ids must be unique (pnpm experiment <id>)`);
      experimentIds.set(ref.id, c.number);
      try {
        await checkExperiment(await loadExperiment(course, c, ref), c, f, { run: opts.runExperiments ?? false });
      } catch (e) {
        f.error('experiment', c.number, ref.id, (e as Error).message);
      }
    }
  }
  checkLeaks(course, f);
  return f.list;
}
