/**
 * What a grader stopped with kill -9 (or a crashed machine) leaves behind:
 * private copies and job files in `.grading/`, and a batch's unpack folder
 * in the system's temporary folder. Each is named with the pid of the
 * process that made it (`ownedName`), so a later run can tell whether its
 * owner is still alive and remove it if not (`sweepLeftovers`).
 */
import { readdirSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WORK_DIR } from './paths.ts';

/** Unpack folders of batches, in the temporary folder. */
export const BATCH_TMP_PREFIX = 'dtlab-batch';

const OWNED = /-(\d+)-[0-9a-f]{12}(?:\.json)?$/;

/** `<prefix>-<this pid>-<12 hex digits>`: a fresh name that says which process owns it. */
export function ownedName(prefix: string): string {
  return `${prefix}-${process.pid}-${randomBytes(6).toString('hex')}`;
}

/** Whether process `pid` is running (someone else's process counts as running). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM'; // someone else's process: alive
  }
}

function sweep(dir: string, keep: (name: string) => boolean): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const name of names) {
    const m = OWNED.exec(name);
    if (!m || keep(name) || alive(Number(m[1]))) continue;
    rmSync(join(dir, name), { recursive: true, force: true });
    removed.push(join(dir, name));
  }
  return removed;
}

/**
 * Removes the private copies, job files and batch unpack folders whose
 * owning process is gone; returns their paths. Never touches anything a
 * live process owns, nor the compiled-code cache.
 */
export function sweepLeftovers(workDir = WORK_DIR, tmp = tmpdir()): string[] {
  return [...sweep(workDir, (n) => n === 'compiled'), ...sweep(tmp, (n) => !n.startsWith(`${BATCH_TMP_PREFIX}-`))];
}
