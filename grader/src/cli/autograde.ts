/**
 * `node --import tsx grader/src/cli/autograde.ts exNN [--root DIR]`: the
 * grading step of a Gradescope autograder (its run_autograder calls it; see
 * the kit's `export --gradescope`). Grades `DIR/submission` and always
 * writes `DIR/results/results.json`. Exits 0 when it graded, 1 when there was
 * nothing to grade, 2 when the command itself could not run.
 */
import { autograde } from '../autograder.ts';
import { findExercise } from '../exercises.ts';
import { parseArgs, runCli, UsageError } from './args.ts';

const USAGE = 'usage: autograde exNN [--root /autograder]';

async function main(): Promise<number> {
  const { positional, options } = parseArgs(process.argv.slice(2), ['root'], [], USAGE);
  if (positional.length !== 1) throw new UsageError(USAGE);
  const outcome = autograde(findExercise(positional[0]!), String(options.root ?? process.env.AUTOGRADER_ROOT ?? '/autograder'));
  console.log(`results written to ${outcome.resultsFile}`);
  return outcome.gradeExit === null ? 1 : 0;
}

await runCli(main);
