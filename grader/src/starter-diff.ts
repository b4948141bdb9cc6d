/**
 * How much of the starter a submission changed: lines added and removed per
 * source file, against the exercise's starter. The lab's loop asks for the
 * smallest repair of the relevant part, not a rewrite; the report shows the
 * count as feedback (never points), so that a student sees when a fix of
 * three lines became a new file of eighty.
 *
 * The starter is `grader/starters/<folder>/src` when that exists (a student
 * export ships a pristine copy there, because the student's
 * `exercises/<folder>/src` is their work), else `exercises/<folder>/src` (in
 * the course repository, where it is the starter as committed).
 *
 * Lines are compared with jsdiff (`diff` on npm), the Myers diff that
 * editors and `git diff --minimal` use; a file pair whose edit script would
 * pass MAX_EDIT lines, or whose diff takes more than DIFF_TIMEOUT_MS, is
 * reported as rewritten instead of diffed, so that the cost stays bounded
 * whatever a submission holds.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type * as Diff from 'diff';
import { GRADER_DIR } from './paths.ts';
import type { Exercise } from './exercises.ts';
import { sourceFiles } from './source-files.ts';

// The diff library, loaded when a grading first compares (after its grading process has started:
// grade.ts), not with the grade command's modules, whose loading delays that start.
const requireHere = createRequire(import.meta.url);
let diff: typeof Diff | undefined;
const diffLibrary = (): typeof Diff => (diff ??= requireHere('diff') as typeof Diff);

/** Lines changed in one file against the starter. */
export interface FileChange {
  /** Relative to the submission folder: `src/allreduce-mean.ts`. */
  path: string;
  added: number;
  removed: number;
  /** 'added' (not in the starter), 'deleted' (only in the starter), 'changed', or 'rewritten' (too different to diff: all lines counted). */
  kind: 'added' | 'deleted' | 'changed' | 'rewritten';
}

/** Edit lengths beyond which a file counts as rewritten rather than diffed. */
export const MAX_EDIT = 1000;
/** Time one file's diff may take before the file counts as rewritten. */
export const DIFF_TIMEOUT_MS = 200;
/** Files listed at most (the rest are summed into the last entry's count). */
export const MAX_FILES = 50;

/** Where the starter of `exercise` is: the export's pristine copy, else the exercise folder itself. */
export function starterSrc(exercise: Exercise, graderDir = GRADER_DIR): string {
  const shipped = join(graderDir, 'starters', exercise.folder, 'src');
  return existsSync(shipped) ? shipped : join(exercise.dir, 'src');
}

function lineCount(text: string): number {
  if (text === '') return 0;
  return text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
}

/** Lines added and removed from `before` to `after` (a file pair). */
export function countChanges(before: string, after: string): { added: number; removed: number; rewritten: boolean } {
  if (before === after) return { added: 0, removed: 0, rewritten: false };
  const parts = diffLibrary().diffLines(before, after, { maxEditLength: MAX_EDIT, timeout: DIFF_TIMEOUT_MS });
  if (!parts) return { added: lineCount(after), removed: lineCount(before), rewritten: true };
  let added = 0;
  let removed = 0;
  for (const p of parts) {
    if (p.added) added += p.count ?? 0;
    else if (p.removed) removed += p.count ?? 0;
  }
  return { added, removed, rewritten: false };
}

/**
 * The source files of `submissionSrc` (a folder already within the
 * submission limits: the grading's private copy) that differ from the
 * starter's, in path order. Files that are the same are left out.
 */
export function changesAgainstStarter(submissionSrc: string, starter: string): FileChange[] {
  const mine = new Set(sourceFiles(submissionSrc));
  const theirs = new Set(existsSync(starter) ? sourceFiles(starter) : []);
  const out: FileChange[] = [];
  for (const rel of [...new Set([...mine, ...theirs])].sort()) {
    const path = `src/${rel}`;
    const after = mine.has(rel) ? readFileSync(join(submissionSrc, rel), 'utf8') : null;
    const before = theirs.has(rel) ? readFileSync(join(starter, rel), 'utf8') : null;
    if (after === null) out.push({ path, added: 0, removed: lineCount(before!), kind: 'deleted' });
    else if (before === null) out.push({ path, added: lineCount(after), removed: 0, kind: 'added' });
    else {
      const c = countChanges(before, after);
      if (c.added || c.removed) out.push({ path, added: c.added, removed: c.removed, kind: c.rewritten ? 'rewritten' : 'changed' });
    }
  }
  return out.slice(0, MAX_FILES);
}

/** "src/allreduce-mean.ts +5 −2" lines of a report, or one line saying nothing changed. */
export function describeChanges(changes: readonly FileChange[]): string {
  if (changes.length === 0) return 'the same as the starter: nothing changed yet';
  const total = changes.reduce((s, c) => s + c.added + c.removed, 0);
  const files = changes.map((c) => `${c.path} +${c.added} −${c.removed}${c.kind === 'changed' ? '' : ` (${c.kind})`}`).join(', ');
  return `${total} line${total === 1 ? '' : 's'} changed against the starter: ${files}`;
}
