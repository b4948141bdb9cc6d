/**
 * The grading side of a Gradescope autograder (`run_autograder` calls
 * `kit.ts autograde exNN --root /autograder`): find the student's source in
 * the submission, put it in the exercise's src/, grade it with the same CLI
 * as `pnpm grade exNN --format gradescope`, and make sure that
 * results/results.json exists and is valid whatever happens.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, lstatSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Exercise } from './exercises.ts';
import { writeAtomic } from './rubric.ts';
import { GRADER_DIR, ROOT } from './paths.ts';
import { syntaxOf } from './source-files.ts';
import { jsonText, printable } from './text.ts';


/** Where the submitted source files are inside `submission`, or null if it holds none. */
export function findSubmittedSrc(submission: string, exercise: Exercise): string | null {
  if (!existsSync(submission)) return null;
  const isDir = (p: string) => existsSync(p) && statSync(p).isDirectory();
  const candidates = (base: string) => [join(base, 'src'), join(base, exercise.folder, 'src'), join(base, 'exercises', exercise.folder, 'src')];
  for (const c of candidates(submission)) if (isDir(c)) return c;
  // A zip of a folder: one folder at the top, holding one of the layouts above.
  const top = readdirSync(submission).filter((n) => !n.startsWith('.') && n !== '__MACOSX');
  if (top.length === 1 && isDir(join(submission, top[0]!))) for (const c of candidates(join(submission, top[0]!))) if (isDir(c)) return c;
  // Loose files: the entry files uploaded one by one.
  if (readdirSync(submission).some((n) => syntaxOf(n) !== null && lstatSync(join(submission, n)).isFile())) return submission;
  return null;
}

/** A results.json that gives 0 points and says why. */
export function failureResults(message: string): Record<string, unknown> {
  return { score: 0, output: message, tests: [] };
}

/** What `autograde` did. */
export interface AutogradeOutcome {
  /** The exit code of the grading (0 passed, 1 failed, 2 error), or null if it did not run. */
  gradeExit: number | null;
  resultsFile: string;
}

/** Grades `root/submission` for `exercise` and writes `root/results/results.json`. */
export function autograde(exercise: Exercise, root: string): AutogradeOutcome {
  const resultsFile = join(root, 'results', 'results.json');
  const src = findSubmittedSrc(join(root, 'submission'), exercise);
  const entries = exercise.manifest.entry.map((e) => e.file).join(', ');
  if (!src) {
    writeAtomic(resultsFile, jsonText(failureResults(`No source files found in your submission. Upload ${entries} (the files themselves, your src/ folder, or the whole ${exercise.folder} folder).`)));
    return { gradeExit: null, resultsFile };
  }
  // Overlay: submitted files replace the starter's, files not submitted stay as the starter has them.
  cpSync(src, join(exercise.dir, 'src'), { recursive: true, force: true, filter: (p) => !lstatSync(p).isSymbolicLink() && !p.includes('node_modules') });
  const cli = join(GRADER_DIR, 'src', 'cli', 'grade.ts');
  // --submission: graded as another person's work (fresh rank workers for every launch), as batch grading does.
  const r = spawnSync(process.execPath, ['--import', 'tsx', cli, exercise.manifest.id, '--submission', exercise.dir, '--format', 'gradescope', '--out', resultsFile], {
    cwd: ROOT,
    env: { ...process.env, NO_COLOR: '1' },
    encoding: 'utf8',
    timeout: exercise.manifest.timeLimits.totalMs + 60_000,
    maxBuffer: 16 * 1024 * 1024,
  });
  process.stdout.write(r.stdout ?? '');
  process.stderr.write(r.stderr ?? '');
  let valid = false;
  try {
    valid = typeof (JSON.parse(readFileSync(resultsFile, 'utf8')) as { score?: unknown }).score === 'number';
  } catch {
    valid = false;
  }
  if (!valid) {
    const tail = `${r.stdout ?? ''}${r.stderr ?? ''}`.trim().split('\n').slice(-12).join('\n');
    writeAtomic(resultsFile, jsonText(failureResults(printable(`The autograder could not grade this submission (${r.error ? r.error.message : `exit code ${r.status}`}). This is not your fault: please tell your TA.\n${tail}`, true))));
  }
  return { gradeExit: r.status, resultsFile };
}
