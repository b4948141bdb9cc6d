/**
 * Finding the class in a submissions folder: one folder or one .zip per
 * student (the name is the student id), and in each, the exercise folders
 * (`ex01-allreduce-mean/` or `ex01/`, at the top or a few levels down, as
 * archives often wrap everything in one more folder).
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Exercise } from '../exercises.ts';
import { UserError } from '../user-error.ts';

/** Where one student's work is. */
export interface StudentSource {
  /** The student id: the folder name, or the zip's name without `.zip`. */
  id: string;
  kind: 'folder' | 'zip';
  /** Absolute path of the folder or zip. */
  path: string;
}

/** The class, and what in the folder was not understood. */
export interface Discovered {
  students: StudentSource[];
  /** One line per thing left out or ambiguous, for the TA. */
  problems: string[];
}

/** Names the batch writes at the top of its output folder: no student may be called that. */
export const RESERVED_NAMES = new Set(['gradebook.csv', 'summary.json', 'batch.json', 'gradescope']);

/** A submissions folder that cannot be read. */
export class DiscoverError extends UserError {
  override name = 'DiscoverError';
}

/** Why `id` cannot name a student (a folder of the output), or null if it can. */
export function badStudentId(id: string): string | null {
  if (id === '' || id.startsWith('.')) return 'it is empty or starts with a dot';
  if (/[\/\\\0]/.test(id) || /[\x00-\x1f]/.test(id)) return 'it holds a slash or a control character';
  if (RESERVED_NAMES.has(id.toLowerCase())) return `'${id}' is a name the batch uses for its own output`;
  return null;
}

/** Lists the students in `dir`, sorted by id. */
export function discoverStudents(dir: string): Discovered {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new DiscoverError(`${dir} is not a folder: pass the folder that holds one folder or .zip per student`);
  const problems: string[] = [];
  const byId = new Map<string, StudentSource>();
  for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    if (entry.name.startsWith('.') || entry.name === '__MACOSX') continue;
    const path = join(dir, entry.name);
    let kind: StudentSource['kind'] | null = null;
    let id = entry.name;
    if (entry.isDirectory()) kind = 'folder';
    else if (entry.isFile() && /\.zip$/i.test(entry.name)) {
      kind = 'zip';
      id = entry.name.replace(/\.zip$/i, '');
    }
    if (!kind) {
      problems.push(`${entry.name}: left out: not a folder or a .zip${entry.isSymbolicLink() ? ' (symbolic links are not followed)' : ''}`);
      continue;
    }
    const bad = badStudentId(id);
    if (bad) {
      problems.push(`${entry.name}: left out: cannot be a student id because ${bad}`);
      continue;
    }
    const seen = byId.get(id);
    if (seen) {
      // A folder and a zip of the same student: the folder wins (it is usually the zip, unpacked by hand).
      const keep = seen.kind === 'folder' ? seen : { id, kind, path };
      problems.push(`${id}: both a folder and a .zip: grading the folder, ignoring the zip`);
      byId.set(id, keep);
      continue;
    }
    byId.set(id, { id, kind, path });
  }
  return { students: [...byId.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)), problems };
}

const SKIP_DIRS = new Set(['node_modules', '__MACOSX', '.git']);
const MAX_DEPTH = 3;

/**
 * The folder of `exercise` in a student's unpacked work: a folder named
 * after it (`ex01-allreduce-mean` or `ex01`, any case) at most three levels
 * down, the shallowest first and, at one depth, one holding `src/` first.
 * When `single` (only this exercise is graded), a `root` that itself holds
 * `src/` is taken as the exercise folder. Null when it is not there.
 */
export function locateExercise(root: string, exercise: Exercise, single = false): string | null {
  const names = new Set([exercise.folder.toLowerCase(), exercise.manifest.id.toLowerCase()]);
  const hasSrc = (d: string) => existsSync(join(d, 'src')) && statSync(join(d, 'src')).isDirectory();
  let level = [root];
  for (let depth = 1; depth <= MAX_DEPTH && level.length; depth++) {
    const next: string[] = [];
    const found: string[] = [];
    for (const d of level) {
      let entries;
      try {
        entries = readdirSync(d, { withFileTypes: true });
      } catch {
        continue;
      }
      for (const e of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
        if (!e.isDirectory() || e.name.startsWith('.') || SKIP_DIRS.has(e.name)) continue;
        const p = join(d, e.name);
        if (names.has(e.name.toLowerCase())) found.push(p);
        else next.push(p);
      }
    }
    if (found.length) return found.find(hasSrc) ?? found[0]!;
    level = next;
  }
  return single && hasSrc(root) ? root : null;
}
