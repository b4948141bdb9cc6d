/**
 * The checks of the curriculum as a whole, across exercises: ids unique, in
 * order and without gaps, folders named `<id>-<slug>`, no solution or check
 * folder without its exercise, and the repository wiring a new exercise
 * needs (its turbo task, its lockfile entries).
 */
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Findings } from './findings.ts';
import { FOLDER_PATTERN, GENERATED_DIRS, type KitLayout } from './layout.ts';
import { turboProblems } from './turbo.ts';

function dirs(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).filter((n) => !GENERATED_DIRS.has(n) && statSync(join(dir, n)).isDirectory()).sort();
}

/** The exercise folders of a layout (every `exNN-slug` folder in exercises/, valid manifest or not), sorted. */
export function exerciseFolderNames(layout: KitLayout): string[] {
  return dirs(layout.exercises).filter((n) => FOLDER_PATTERN.test(n));
}

/** Resolves `ex01`, `1` or `ex01-allreduce-mean` to an exercise folder of the layout; null if there is none. */
export function resolveFolder(layout: KitLayout, name: string): string | null {
  const folders = exerciseFolderNames(layout);
  if (folders.includes(name)) return name;
  const m = /^(?:ex)?(\d{1,2})$/i.exec(name.trim());
  return m ? (folders.find((f) => f.startsWith(`ex${m[1]!.padStart(2, '0')}-`)) ?? null) : null;
}

/** Whether pnpm-lock.yaml has an importer for the workspace package at `path` (relative to the root). */
export function lockfileHasImporter(lockText: string, path: string): boolean {
  return new RegExp(`^  ${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:\\s*$`, 'm').test(lockText);
}

/** Runs the curriculum-wide checks. */
export function checkCurriculum(layout: KitLayout): Findings {
  const f = new Findings(null);
  for (const name of readdirSync(layout.exercises)) {
    if (GENERATED_DIRS.has(name) || FOLDER_PATTERN.test(name)) continue;
    f.error('stray-files', `exercises/${name} is not an exercise folder: exercises/ holds only exNN-slug folders`);
  }
  const folders = exerciseFolderNames(layout);
  let chapter = 0;
  folders.forEach((folder, i) => {
    const [, id, slug] = FOLDER_PATTERN.exec(folder)!;
    const want = `ex${String(i + 1).padStart(2, '0')}`;
    if (id !== want) {
      const dup = folders.filter((x) => x.startsWith(`${id}-`));
      f.error('ids', dup.length > 1 ? `${dup.join(' and ')} share the id ${id}: ids must be unique` : `${folder} should be ${want}: ids run ex01, ex02, ... in order without gaps`);
    }
    let manifest: { id?: unknown; slug?: unknown; chapter?: unknown } = {};
    try {
      manifest = JSON.parse(readFileSync(join(layout.exercises, folder, 'exercise.json'), 'utf8')) as typeof manifest;
    } catch {
      return; // the exercise's own check reports a missing or broken manifest
    }
    if (manifest.id !== id || manifest.slug !== slug) f.error('ids', `exercises/${folder}/exercise.json says id '${String(manifest.id)}' and slug '${String(manifest.slug)}': the folder must be named <id>-<slug>`);
    if (typeof manifest.chapter === 'number') {
      if (manifest.chapter < chapter) f.warn('ids', `${folder} is in chapter ${manifest.chapter}, after an exercise of chapter ${chapter}: exercises usually follow the chapters`);
      chapter = Math.max(chapter, manifest.chapter);
    }
  });
  const known = new Set(folders);
  for (const [dir, what] of [[layout.solutions, 'solutions'], [layout.checks, 'grader/checks'], [layout.hidden, 'grader/hidden']] as const) {
    for (const name of dirs(dir)) if (!known.has(name)) f.error('stray-files', `${what}/${name} belongs to no exercise (no exercises/${name}/)`);
  }
  for (const p of turboProblems(layout, folders)) f.error('turbo', `${p}: run \`pnpm kit sync\``);
  const lock = existsSync(layout.lockfile) ? readFileSync(layout.lockfile, 'utf8') : '';
  for (const folder of folders) {
    for (const path of [`exercises/${folder}`, `solutions/${folder}`]) {
      if (existsSync(join(layout.root, path, 'package.json')) && !lockfileHasImporter(lock, path)) f.error('lockfile', `pnpm-lock.yaml has no entry for ${path}: run \`pnpm install\` (CI's frozen install fails until you do)`);
    }
  }
  return f;
}
