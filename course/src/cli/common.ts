/**
 * What the course's command lines share: argument parsing (node:util's
 * parseArgs, strict), colours that switch off when output is not a terminal
 * or NO_COLOR is set, the student folder, and exit codes (2 for a command
 * that cannot run, with a message that says what to do).
 */
import { resolve } from 'node:path';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import pc from 'picocolors';
import { REPO_ROOT } from '../paths.ts';

/** A command line that cannot be understood or a command that cannot run; exit code 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** The course's own errors, printed as their message alone (they say what to do). */
const KNOWN = new Set(['UsageError', 'CourseManifestError', 'UnknownChapterError', 'NoKnowledgeCheckError', 'CourseModuleError', 'UnknownExperimentError', 'AnswersFileError', 'ExperimentRunError', 'AttemptLimitError', 'CourseEditError']);

/** Parses argv with `options`, turning parseArgs' errors into UsageError with `usage`. */
export function parse<O extends NonNullable<ParseArgsConfig['options']>>(argv: string[], options: O, usage: string) {
  try {
    return parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  } catch (e) {
    throw new UsageError(`${(e as Error).message}\n${usage}`);
  }
}

/** The student repository: `--dir DIR`, or the repository the course is in. */
export function studentRoot(dir: string | undefined): string {
  return dir === undefined ? REPO_ROOT : resolve(dir);
}

/** Colours, only on a terminal and without NO_COLOR. */
export const colors = pc.createColors(Boolean(process.stdout.isTTY) && !process.env.NO_COLOR);

/** Runs `main` and exits with its code; known errors print their message, others their stack. */
export async function runCli(main: () => Promise<number>): Promise<void> {
  // Output piped into `head` closes early: stop quietly instead of crashing on the broken pipe.
  process.stdout.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw e;
  });
  try {
    process.exitCode = await main();
  } catch (e) {
    const err = e as Error;
    if (err?.name === 'ExitPromptError') {
      // Ctrl-C in a prompt: the caller saved what was answered.
      process.exitCode = 130;
      return;
    }
    console.error(KNOWN.has(err?.name) ? err.message : `error: ${err?.stack ?? String(e)}`);
    process.exitCode = 2;
  }
}
