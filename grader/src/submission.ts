/**
 * A submission: the folder a student hands in (it holds the exercise's
 * `src/`). Grading never touches it: it copies `src/` into a private folder
 * and fingerprints what it copied.
 */
import { createHash, type Hash } from 'node:crypto';
import { closeSync, copyFileSync, lstatSync, mkdirSync, openSync, readdirSync, readSync, rmSync, statSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { ensureWorkDir, WORK_DIR } from './paths.ts';
import { filesUnder } from './files.ts';
import { ownedName } from './leftovers.ts';
import { UserError } from './user-error.ts';

/** The fingerprint recorded for a submission folder without `src/` (nothing to hash). */
export const NO_SRC_SHA256 = '0'.repeat(64);

/** A submission folder that cannot be graded: names it and what is missing. */
export class SubmissionError extends UserError {
  override name = 'SubmissionError';
}

/**
 * SHA-256 fingerprint of every file under `dir`, in sorted order: each file's
 * name, its length and its contents, so that no two different trees (a NUL in
 * a file's contents imitating the start of the next file, say) hash alike.
 * Files are read in pieces: any size can be hashed.
 */
export function hashTree(dir: string, limits: { maxBytes?: number; maxFiles?: number } = {}): string {
  const h = createHash('sha256');
  let bytes = 0;
  let files = 0;
  for (const f of filesUnder(dir, () => false, limits.maxFiles !== undefined ? limits.maxFiles + 1 : undefined)) {
    const path = join(dir, f);
    const size = statSync(path).size;
    bytes += size;
    if (++files > (limits.maxFiles ?? Infinity) || bytes > (limits.maxBytes ?? Infinity)) {
      // Over the limits: not read to its end (the grading refuses it anyway); still a fingerprint that changes with it.
      return createHash('sha256').update(`dtlab: over the limits after ${f}`).update(h.digest('hex')).digest('hex');
    }
    h.update(f).update('\0').update(String(size)).update('\0');
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

/**
 * Limits of what a submission's `src/` may hold, checked while it is copied,
 * before anything reads or parses it: a student's source is a few files of a
 * few kilobytes, and a file of tens of megabytes (easily made, and easily
 * packed into a small zip) would exhaust the memory of whatever parses it.
 */
export const SUBMISSION_LIMITS = Object.freeze({
  /** Bytes of any one file under src/. */
  fileBytes: 512 * 1024,
  /** Bytes of all files under src/ together. */
  totalBytes: 4 * 1024 * 1024,
  /** Files under src/. */
  files: 1000,
  /** Folders below src/, nested. */
  depth: 32,
});

/** A submission over one of SUBMISSION_LIMITS: names what, and by how much. */
export class SubmissionTooLargeError extends SubmissionError {
  override name = 'SubmissionTooLargeError';
  constructor(
    message: string,
    /** The file or folder at fault, relative to the submission (src/...), or null for the whole of src/. */
    readonly path: string | null,
    readonly actual: number,
    readonly limit: number,
  ) {
    super(message);
  }
}

/** A private copy of a submission's `src/`, and what the copy left out. */
export interface PrivateCopy {
  /** The private folder; its `src/` is what runs. */
  dir: string;
  /** SHA-256 over the sorted file names and contents of `src/`. */
  sha256: string;
  /** Entries of src/ that are neither regular files nor folders (symbolic links, pipes...), relative paths: not copied. */
  skipped: string[];
  /** Deletes the private folder. */
  dispose(): void;
}

const KIB = (n: number) => `${Math.ceil(n / 1024)} KiB`;

/**
 * Copies `submissionDir/src` into a new private folder under `workDir`
 * (default `.grading/`): regular files and folders only, within
 * SUBMISSION_LIMITS. Throws SubmissionError when there is no src/ folder
 * (or it is a symbolic link) and SubmissionTooLargeError over a limit; any
 * other file-system error of the submission's own making (a file it may not
 * read, say) is a SubmissionError too, naming the path.
 */
export function privateCopy(submissionDir: string, workDir = WORK_DIR): PrivateCopy {
  const src = join(resolve(submissionDir), 'src');
  let st;
  try {
    st = lstatSync(src);
  } catch {
    st = null;
  }
  if (!st || (!st.isDirectory() && !st.isSymbolicLink())) {
    throw new SubmissionError(
      `${submissionDir} has no src/ folder: a submission is a folder holding the exercise's src/ (for example exercises/ex01-allreduce-mean or solutions/ex01-allreduce-mean)`,
    );
  }
  if (st.isSymbolicLink()) {
    throw new SubmissionError(`${submissionDir}: src is a symbolic link, and a submission's src/ must be a folder of its own (links could point anywhere): hand in the files themselves`);
  }
  if (workDir === WORK_DIR) ensureWorkDir();
  // Named with this process's pid: if it dies with kill -9, a later run removes the copy (sweepLeftovers).
  const dir = join(workDir, ownedName(basename(resolve(submissionDir)).replace(/[^A-Za-z0-9_.-]/g, '_')));
  mkdirSync(dir, { recursive: true });
  try {
    const skipped = copyTree(src, join(dir, 'src'));
    return { dir, sha256: hashTree(join(dir, 'src')), skipped, dispose: () => rmSync(dir, { recursive: true, force: true }) };
  } catch (e) {
    rmSync(dir, { recursive: true, force: true });
    if (e instanceof SubmissionError) throw e;
    const err = e as NodeJS.ErrnoException;
    throw new SubmissionError(`${submissionDir}: src/ could not be copied (${err.code ?? err.name}: ${err.message}); make every file in it readable and grade again`);
  }
}

/**
 * Copies the regular files and folders of `from` to `to` within
 * SUBMISSION_LIMITS, sizes checked before a byte is read; returns the
 * entries left out (symbolic links, pipes, sockets, devices).
 */
function copyTree(from: string, to: string): string[] {
  const limits = SUBMISSION_LIMITS;
  const skipped: string[] = [];
  let files = 0;
  let total = 0;
  const walk = (rel: string, depth: number) => {
    if (depth > limits.depth) {
      throw new SubmissionTooLargeError(`src/${rel} is ${depth} folders deep, more than the ${limits.depth} a submission may nest`, `src/${rel}`, depth, limits.depth);
    }
    mkdirSync(join(to, rel), { recursive: true });
    for (const name of readdirSync(join(from, rel)).sort()) {
      const r = rel ? `${rel}/${name}` : name;
      const st = lstatSync(join(from, r));
      if (st.isDirectory()) walk(r, depth + 1);
      else if (!st.isFile()) skipped.push(`src/${r}`);
      else {
        if (st.size > limits.fileBytes) {
          throw new SubmissionTooLargeError(`src/${r} is ${KIB(st.size)} (${st.size} bytes), over the ${KIB(limits.fileBytes)} one file of a submission may be: a source file is a few kilobytes; remove generated or data files`, `src/${r}`, st.size, limits.fileBytes);
        }
        total += st.size;
        if (++files > limits.files) throw new SubmissionTooLargeError(`src/ holds more than ${limits.files} files`, null, files, limits.files);
        if (total > limits.totalBytes) {
          throw new SubmissionTooLargeError(`src/ holds more than ${KIB(limits.totalBytes)} (the files up to src/${r} already make ${KIB(total)}): a submission's source is a few kilobytes; remove generated or data files`, null, total, limits.totalBytes);
        }
        copyFileSync(join(from, r), join(to, r));
      }
    }
  };
  walk('', 0);
  return skipped;
}
