/**
 * Where things are: the repository root, exercises, solutions, the grader's
 * check modules and the students' grade records.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, realpathSync, symlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The grader package folder. */
export const GRADER_DIR = join(dirname(fileURLToPath(import.meta.url)), '..');
/** The repository root. */
export const ROOT = join(GRADER_DIR, '..');
/** The libraries' folder, `packages/` (tensor, runtime, collectives...). */
export const PACKAGES_DIR = join(ROOT, 'packages');
/** Exercises: `exercises/exNN-slug/`. */
export const EXERCISES_DIR = join(ROOT, 'exercises');
/** Reference solutions: `solutions/exNN-slug/` (absent in a student export). */
export const SOLUTIONS_DIR = join(ROOT, 'solutions');
/** Public check modules: `grader/checks/exNN-slug/checks.ts`. */
export const PUBLIC_CHECKS_DIR = join(GRADER_DIR, 'checks');
/** Hidden check modules: `grader/hidden/exNN-slug/checks.ts` (absent in a student export). */
export const HIDDEN_CHECKS_DIR = join(GRADER_DIR, 'hidden');
/** JSON schemas. */
export const SCHEMA_DIR = join(GRADER_DIR, 'schema');
/** A student's grade records: rubrics, hint counters. */
export const GRADES_DIR = join(ROOT, '.grades');
/** Private copies of submissions while they are graded (inside the repository so that @dtlab/* resolve). */
export const WORK_DIR = join(ROOT, '.grading');

/** The check module of `folder` (an exercise folder name) with `visibility`, if present. */
export function checkModulePath(folder: string, visibility: 'public' | 'hidden'): string | null {
  const p = join(visibility === 'public' ? PUBLIC_CHECKS_DIR : HIDDEN_CHECKS_DIR, folder, 'checks.ts');
  return existsSync(p) ? p : null;
}

/** A workspace package: its name and folder. */
export interface WorkspacePackage {
  name: string;
  dir: string;
}

let coursePackagesFound: WorkspacePackage[] | undefined;

/**
 * The course packages: the workspace packages the grader depends on
 * (`workspace:` in grader/package.json), sorted by name. What decides a
 * verdict follows from this one list: the grader's version, the code the
 * compile cache holds, the kit's turbo inputs, what a student export takes.
 * A package the grader does not depend on cannot change a verdict.
 */
export function coursePackages(): WorkspacePackage[] {
  if (coursePackagesFound) return coursePackagesFound;
  const pkg = JSON.parse(readFileSync(join(GRADER_DIR, 'package.json'), 'utf8')) as { dependencies?: Record<string, string> };
  coursePackagesFound = Object.entries(pkg.dependencies ?? {})
    .filter(([, spec]) => spec.startsWith('workspace:'))
    .map(([name]) => ({ name, dir: realpathSync(join(GRADER_DIR, 'node_modules', ...name.split('/'))) }))
    .sort((a, b) => a.name.localeCompare(b.name));
  return coursePackagesFound;
}

/** The folder of every course package (see coursePackages). */
export function coursePackageDirs(): string[] {
  return coursePackages().map((p) => p.dir);
}

/**
 * The course packages that rank code loads (the checks' rank programs and the
 * submissions): all but those whose package.json says
 * `"dtlab": { "loadedByRanks": false }` (the course's quizzes and readings,
 * which only the grader's own process reads). They are what the course
 * bundle holds, what a confined rank hardens, and what a private copy links.
 */
export function rankPackages(): WorkspacePackage[] {
  return coursePackages().filter((p) => (JSON.parse(readFileSync(join(p.dir, 'package.json'), 'utf8')) as { dtlab?: { loadedByRanks?: boolean } }).dtlab?.loadedByRanks !== false);
}

/**
 * Where the private copies' imports of the course packages resolve: a
 * `node_modules/` in the work folder that links every course package by
 * name. A copy sits in `.grading/<name>/`, and the repository root's
 * node_modules links no workspace package (the root depends on none), so
 * without these links `import '@dtlab/tensor'` would not resolve from it.
 */
export const WORK_MODULES_DIR = join(WORK_DIR, 'node_modules');

/**
 * Makes the work folder, private to its owner (it holds the compiled course,
 * hidden checks included, and the private copies of submissions), with its
 * links to the course packages (see WORK_MODULES_DIR).
 */
export function ensureWorkDir(): void {
  mkdirSync(WORK_DIR, { recursive: true, mode: 0o700 });
  chmodSync(WORK_DIR, 0o700);
  for (const p of rankPackages()) {
    const link = join(WORK_MODULES_DIR, ...p.name.split('/'));
    if (existsSync(link)) continue;
    mkdirSync(dirname(link), { recursive: true });
    try {
      symlinkSync(p.dir, link, 'dir');
    } catch (e) {
      // another grading made it meanwhile
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
  }
}
