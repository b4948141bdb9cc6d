/**
 * Finding exercises: `ex01`, `1`, `ex01-allreduce-mean` or a folder name all
 * name the same exercise.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { EXERCISES_DIR } from './paths.ts';
import { loadManifest, type Manifest } from './manifest.ts';
import { UserError } from './user-error.ts';

/** An exercise of the curriculum. */
export interface Exercise {
  /** Folder name, e.g. `ex01-allreduce-mean`. */
  folder: string;
  /** Absolute path of the exercise folder. */
  dir: string;
  manifest: Manifest;
}

/** Exercise folders, in order. */
export function exerciseFolders(root = EXERCISES_DIR): string[] {
  if (!existsSync(root)) return [];
  return readdirSync(root, { withFileTypes: true })
    .filter((d) => d.isDirectory() && /^ex\d{2}-/.test(d.name) && existsSync(join(root, d.name, 'exercise.json')))
    .map((d) => d.name)
    .sort();
}

/** Every exercise with its validated manifest. */
export function listExercises(root = EXERCISES_DIR): Exercise[] {
  return exerciseFolders(root).map((folder) => ({ folder, dir: join(root, folder), manifest: loadManifest(join(root, folder, 'exercise.json'), folder) }));
}

/** An unknown exercise name: lists the ones there are. */
export class UnknownExerciseError extends UserError {
  override name = 'UnknownExerciseError';
}

/** Resolves a user's name for an exercise (`ex1`, `ex01`, `01`, `ex01-allreduce-mean`). */
export function findExercise(name: string, root = EXERCISES_DIR): Exercise {
  const folders = exerciseFolders(root);
  const m = /^(?:ex)?(\d{1,2})(?:-.*)?$/i.exec(name.trim());
  const id = m ? `ex${m[1]!.padStart(2, '0')}` : null;
  const folder = folders.find((f) => f === name) ?? (id ? folders.find((f) => f.startsWith(`${id}-`)) : undefined);
  if (!folder) {
    throw new UnknownExerciseError(`no exercise named '${name}'. Exercises: ${folders.join(', ') || '(none found in exercises/)'}`);
  }
  return { folder, dir: join(root, folder), manifest: loadManifest(join(root, folder, 'exercise.json'), folder) };
}

