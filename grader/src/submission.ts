/**
 * A submission: the folder a student hands in (it holds the exercise's
 * `src/`). Grading never touches it: it copies `src/` into a private folder
 * and fingerprints what it copied.
 */
import { createHash, type Hash } from 'node:crypto';
import { closeSync, cpSync, existsSync, lstatSync, mkdirSync, openSync, readSync, rmSync, statSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { WORK_DIR } from './paths.ts';
import { filesUnder } from './files.ts';
import { ownedName } from './leftovers.ts';

/** The fingerprint recorded for a submission folder without `src/` (nothing to hash). */
export const NO_SRC_SHA256 = '0'.repeat(64);

/** A private copy of a submission's `src/`, and its fingerprint. */
export interface PrivateCopy {
  /** The private folder; its `src/` is what runs. */
  dir: string;
  /** SHA-256 over the sorted file names and contents of `src/`. */
  sha256: string;
  /** Deletes the private folder. */
  dispose(): void;
}

/** A submission folder that cannot be graded: names it and what is missing. */
export class SubmissionError extends Error {
  override name = 'SubmissionError';
}

/**
 * SHA-256 fingerprint of every file under `dir`, in sorted order: each file's
 * name, its length and its contents, so that no two different trees (a NUL in
 * a file's contents imitating the start of the next file, say) hash alike.
 * Files are read in pieces: any size can be hashed.
 */
export function hashTree(dir: string): string {
  const h = createHash('sha256');
  for (const f of filesUnder(dir)) {
    const path = join(dir, f);
    h.update(f).update('\0').update(String(statSync(path).size)).update('\0');
    hashFileInto(h, path);
  }
  return h.digest('hex');
}

/** SHA-256 of one file's contents, read in pieces. */
export function hashFile(path: string): string {
  const h = createHash('sha256');
  hashFileInto(h, path);
  return h.digest('hex');
}

function hashFileInto(h: Hash, path: string): void {
  const fd = openSync(path, 'r');
  try {
    const chunk = Buffer.allocUnsafe(1 << 20);
    for (let n = readSync(fd, chunk); n > 0; n = readSync(fd, chunk)) h.update(chunk.subarray(0, n));
  } finally {
    closeSync(fd);
  }
}

/** Copies `submissionDir/src` into a new private folder under `workDir` (default `.grading/`). */
export function privateCopy(submissionDir: string, workDir = WORK_DIR): PrivateCopy {
  const src = join(resolve(submissionDir), 'src');
  if (!existsSync(src) || !statSync(src).isDirectory()) {
    throw new SubmissionError(
      `${submissionDir} has no src/ folder: a submission is a folder holding the exercise's src/ (for example exercises/ex01-allreduce-mean or solutions/ex01-allreduce-mean)`,
    );
  }
  // Named with this process's pid: if it dies with kill -9, a later run removes the copy (sweepLeftovers).
  const dir = join(workDir, ownedName(basename(resolve(submissionDir)).replace(/[^A-Za-z0-9_.-]/g, '_')));
  mkdirSync(dir, { recursive: true });
  // Regular files and folders only: a symlink in a submission could point anywhere.
  cpSync(src, join(dir, 'src'), { recursive: true, filter: (p) => !lstatSync(p).isSymbolicLink() });
  return { dir, sha256: hashTree(join(dir, 'src')), dispose: () => rmSync(dir, { recursive: true, force: true }) };
}
