/**
 * `pnpm grade [exNN] [--submission DIR] [--out FILE] [--format rubric|gradescope|junit] [--seed N] [--no-hidden] [--typecheck]`
 *
 * Grades one exercise and prints a report; exits 0 when every check passed,
 * 1 when one failed, 2 when grading itself failed. With --typecheck the
 * submission is also type-checked meanwhile, as batch grading always does:
 * type errors become a note in the report and the rubric (and the flag
 * 'type-errors'), never points. It is not the default because it takes about
 * two seconds more. Without an exercise it lists every exercise with its
 * last score.
 */
import { randomInt } from 'node:crypto';
import { existsSync } from 'node:fs';
import { relative } from 'node:path';
import { findExercise, listExercises } from '../exercises.ts';
import { gradeSubmission } from '../grade.ts';
import { sweepLeftovers } from '../leftovers.ts';
import { formatReport, palette } from '../report.ts';
import { boundedRubric, validateRubric, writeRubric } from '../rubric.ts';
import { gradescopeResults, writeGradescopeResults } from '../export/gradescope.ts';
import { junitXml, writeJunit } from '../export/junit.ts';
import { defaultRubricPath, hintsShown, lastRubric } from '../grade-records.ts';
import { recordTypeCheck, TypeChecker } from '../typecheck.ts';
import { parseArgs, runCli, UsageError } from './args.ts';

const USAGE = 'usage: pnpm grade [exNN] [--submission DIR] [--out FILE] [--format rubric|gradescope|junit] [--seed N] [--no-hidden] [--typecheck]';

function progressView(color: boolean): number {
  const c = palette(color);
  const rows = listExercises().map((e) => {
    const r = lastRubric(e.manifest.id);
    const status = !r ? c.dim('not graded yet') : r.status === 'passed' ? c.green(`passed ${r.score}/${r.maxScore}`) : r.status === 'failed' ? c.red(`failed ${r.score}/${r.maxScore}`) : c.yellow('grading error');
    const hints = hintsShown(e.manifest.id);
    return `  ${e.manifest.id}  ${e.manifest.title.padEnd(34)} ${status}${hints ? c.dim(` · ${hints} hint${hints > 1 ? 's' : ''} shown`) : ''}`;
  });
  console.log(c.bold('dtlab exercises') + c.dim(' (pnpm grade exNN grades one)'));
  console.log(rows.join('\n') || '  (no exercises found)');
  return 0;
}

async function main(): Promise<number> {
  const { positional, options } = parseArgs(process.argv.slice(2), ['submission', 'out', 'format', 'seed'], ['no-hidden', 'typecheck', 'help'], USAGE);
  if (options.help) {
    console.log(USAGE);
    return 0;
  }
  const color = Boolean(process.stdout.isTTY) && !process.env.NO_COLOR;
  if (positional.length === 0) return progressView(color);
  if (positional.length > 1) throw new UsageError(`grade one exercise at a time, got: ${positional.join(' ')}\n${USAGE}`);
  const exercise = findExercise(positional[0]!);
  const format = (options.format as string | undefined) ?? 'rubric';
  if (format !== 'rubric' && format !== 'gradescope' && format !== 'junit') throw new UsageError(`--format must be rubric, gradescope or junit, got ${format}\n${USAGE}`);
  let seed: number;
  if (options.seed !== undefined) {
    seed = Number(options.seed);
    if (!Number.isInteger(seed) || seed < 0) throw new UsageError(`--seed must be a non-negative integer, got ${options.seed}`);
  } else {
    seed = randomInt(0, 2 ** 31);
  }
  const id = exercise.manifest.id;
  const submissionDir = (options.submission as string | undefined) ?? exercise.dir;
  if (!existsSync(submissionDir)) throw new UsageError(`--submission ${submissionDir}: no such folder (a submission is a folder holding the exercise's src/)`);
  const out = (options.out as string | undefined) ?? (format === 'rubric' ? defaultRubricPath(id) : format === 'junit' ? defaultRubricPath(`${id}.junit`).replace(/\.json$/, '.xml') : defaultRubricPath(`${id}.gradescope`));
  const shown = hintsShown(id);
  const live = Boolean(process.stderr.isTTY);
  sweepLeftovers(); // private copies of a grading killed with kill -9
  const typeChecker = options.typecheck ? new TypeChecker() : null;
  const typed = typeChecker?.check(submissionDir, exercise);
  let rubric = await gradeSubmission({
    exercise,
    submissionDir,
    seed,
    hidden: !options['no-hidden'],
    // A student grading their own exercise folder has no one to cheat: workers are reused (twice as
    // fast). Any other folder (a TA grading a student's) gets fresh workers for every launch.
    reuseWorkers: options.submission === undefined,
    hintsShown: shown,
    onProgress: (m) => {
      if (live && m.type === 'check-started') process.stderr.write(`\r\x1b[2Kgrading ${id}: ${m.id} ...`);
    },
  });
  if (typeChecker && typed) {
    if (live) process.stderr.write(`\r\x1b[2Kgrading ${id}: type-checking src/ ...`);
    recordTypeCheck(rubric, await typed);
    await typeChecker.close();
    rubric = boundedRubric(rubric); // the type check's note, bounded like the rest
  }
  if (live) process.stderr.write('\r\x1b[2K');
  if (format === 'rubric') writeRubric(out, rubric);
  else {
    validateRubric(rubric);
    if (format === 'junit') writeJunit(out, junitXml([{ rubric }], `dtlab ${id}`));
    else writeGradescopeResults(out, gradescopeResults(rubric, { leaderboard: exercise.manifest.leaderboard }));
    // The student's progress view reads the rubric, whatever format was asked for.
    if (options.out === undefined) writeRubric(defaultRubricPath(id), rubric);
  }
  console.log(formatReport(rubric, { color, title: exercise.manifest.title, rubricPath: relative(process.cwd(), out) || out, exerciseId: id, hintsLeft: exercise.manifest.hints.length - shown }));
  return rubric.status === 'passed' ? 0 : rubric.status === 'failed' ? 1 : 2;
}

await runCli(main);
