/**
 * Where the kit looks: the folders of one repository, by role. The kit takes
 * a layout rather than the grader's fixed paths so that it can check, copy
 * and export any checkout (a scratch copy, an export in the making).
 */
import { join } from 'node:path';
import { ROOT } from '@dtlab/grader/grading';

/** The folders and files of a dtlab repository that the kit reads or writes. */
export interface KitLayout {
  root: string;
  exercises: string;
  solutions: string;
  /** Public check modules: `grader/checks/<folder>/`. */
  checks: string;
  /** Hidden check modules: `grader/hidden/<folder>/`. */
  hidden: string;
  grader: string;
  /** The kit package: `kit/`. */
  kit: string;
  /** What `kit new` copies: `kit/templates/`. */
  templates: string;
  turboJson: string;
  lockfile: string;
}

/** The layout of the repository at `root`. */
export function layoutOf(root: string): KitLayout {
  const grader = join(root, 'grader');
  return {
    root,
    exercises: join(root, 'exercises'),
    solutions: join(root, 'solutions'),
    checks: join(grader, 'checks'),
    hidden: join(grader, 'hidden'),
    grader,
    kit: join(root, 'kit'),
    templates: join(root, 'kit', 'templates'),
    turboJson: join(root, 'turbo.json'),
    lockfile: join(root, 'pnpm-lock.yaml'),
  };
}

/** The repository this kit belongs to. */
export const REPO = layoutOf(ROOT);

/** Folder names an exercise id and slug make: `ex04-ring-sum`. */
export const FOLDER_PATTERN = /^(ex\d{2})-([a-z0-9]+(?:-[a-z0-9]+)*)$/;

/** Folders that tools create inside a package; never part of an exercise, never copied. */
export const GENERATED_DIRS = new Set(['node_modules', '.turbo', '.kit', '.vitest-results', 'dist', 'coverage', '.grades', '.grading', '.git', '.DS_Store']);

/** Where the `kit:check` task of an exercise writes its report (inside the exercise folder, a turbo output). */
export const KIT_RESULT_DIR = '.kit';
export const KIT_RESULT_FILE = 'check.json';

/** The package names the kit gives an exercise and its solution. */
export function packageNames(folder: string): { exercise: string; solution: string } {
  return { exercise: `@dtlab/${folder}`, solution: `@dtlab/solution-${folder}` };
}
