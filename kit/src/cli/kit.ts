/**
 * `pnpm kit`: the course author's tools.
 *
 *   pnpm kit new exNN-slug --title "..." --chapter N [--no-install]
 *   pnpm kit check [exNN ...] [--force] [--concurrency N]
 *   pnpm kit check [exNN ...] --local [--seeds 1,2,3]
 *   pnpm kit export --student OUT [--force]
 *   pnpm kit export --gradescope exNN OUT.zip [--force]
 *   pnpm kit sync
 *
 * and one that turbo runs: `check-task` (the turbo task of one exercise, run
 * in its folder). Exit codes: 0 done, 1 the curriculum or the export has a
 * problem, 2 the command itself could not run.
 */
import { basename, dirname, relative, resolve } from 'node:path';
import { palette, parseArgs, runCli, UsageError, UserError } from '@dtlab/grader/grading';
import { checkExercise, runKitCheck, writeExerciseReport } from '../check.ts';
import { exerciseFolderNames } from '../curriculum.ts';
import { exportGradescope } from '../export-gradescope.ts';
import { exportStudent } from '../export-student.ts';
import { REPO } from '../layout.ts';
import { installWorkspace, nextStepsText, scaffoldExercise } from '../scaffold.ts';
import { formatKitCheck } from '../summary.ts';
import { syncPackageScripts } from '../sync.ts';
import { syncTurbo } from '../turbo.ts';

const USAGE = `usage:
  pnpm kit new exNN-slug --title "..." --chapter N [--no-install]   scaffold an exercise from the template
  pnpm kit check [exNN ...] [--force] [--concurrency N]             check the curriculum (through turbo, cached)
  pnpm kit check [exNN ...] --local [--seeds 1,2,3]                 the same in this process, one exercise at a time
  pnpm kit export --student OUT [--force]                           the repository students get
  pnpm kit export --gradescope exNN OUT.zip [--force]               a Gradescope autograder
  pnpm kit sync                                                     write each exercise's kit:check task and script`;

const color = Boolean(process.stdout.isTTY) && !process.env.NO_COLOR;
const c = palette(color);
const shown = (p: string) => relative(process.cwd(), p) || '.';

async function cmdNew(argv: string[]): Promise<number> {
  const { positional, options } = parseArgs(argv, ['title', 'chapter'], ['no-install'], USAGE);
  if (positional.length !== 1 || options.title === undefined || options.chapter === undefined) throw new UsageError(`kit new needs a name, --title and --chapter\n${USAGE}`);
  const r = scaffoldExercise({ name: positional[0]!, title: String(options.title), chapter: Number(options.chapter) });
  console.log(c.bold(`Scaffolded ${r.folder} from the template (a ring sum whose starter forwards only its own value):`));
  for (const f of r.files) console.log(`  + ${f}`);
  if (r.turboChanged) console.log(`  ~ turbo.json (the ${r.folder} kit:check task)`);
  if (r.courseChanged) console.log(`  ~ course/course.json (${r.folder}, last in chapter ${String(options.chapter)})`);
  let installed = false;
  if (!options['no-install']) {
    console.log(c.dim('\npnpm install (links the new packages, updates pnpm-lock.yaml) ...'));
    const failure = installWorkspace();
    installed = failure === null;
    if (failure) console.log(c.yellow(`pnpm install failed; run it yourself:\n${failure}`));
  }
  console.log(`\n${c.bold('Next steps:')}\n${nextStepsText(r, installed)}`);
  return 0;
}

async function cmdCheck(argv: string[]): Promise<number> {
  const { positional, options } = parseArgs(argv, ['concurrency', 'seeds'], ['force', 'local'], USAGE);
  const concurrency = options.concurrency === undefined ? 2 : Number(options.concurrency);
  if (!Number.isInteger(concurrency) || concurrency < 1) throw new UsageError(`--concurrency must be a whole number from 1, got ${options.concurrency}`);
  let seeds: number[] | undefined;
  if (options.seeds !== undefined) {
    if (!options.local) throw new UsageError('--seeds needs --local: the turbo tasks grade under seeds 1, 2, 3, so that their results can be cached');
    seeds = String(options.seeds).split(',').map(Number);
    if (!seeds.length || seeds.some((x) => !Number.isInteger(x) || x < 0)) throw new UsageError(`--seeds takes non-negative whole numbers separated by commas, got ${options.seeds}`);
  }
  const result = await runKitCheck({ only: positional, force: Boolean(options.force), local: Boolean(options.local), concurrency, ...(seeds ? { seeds } : {}) });
  const { text, exitCode } = formatKitCheck(result, color);
  console.log(`\n${text}`);
  return exitCode;
}

/** The turbo task: checks the exercise whose folder is the current directory. */
async function cmdCheckTask(argv: string[]): Promise<number> {
  const { positional } = parseArgs(argv, [], [], USAGE);
  const cwd = process.cwd();
  const folder = positional[0] ?? basename(cwd);
  if (!positional[0] && resolve(dirname(cwd)) !== resolve(REPO.exercises)) throw new UsageError(`kit check-task runs in an exercise folder (exercises/exNN-slug), not in ${cwd}`);
  const report = await checkExercise(folder);
  writeExerciseReport(REPO, report);
  const errors = report.findings.filter((f) => f.level === 'error');
  for (const f of report.findings) console.log(`${f.level} [${f.check}] ${f.message}`);
  console.log(`${folder}: ${errors.length ? `${errors.length} error(s)` : 'ok'} (${(report.durationMs / 1000).toFixed(1)} s)`);
  return errors.length ? 1 : 0;
}

async function cmdExport(argv: string[]): Promise<number> {
  const { positional, options } = parseArgs(argv, ['student', 'gradescope'], ['force'], USAGE);
  const force = Boolean(options.force);
  if (typeof options.student === 'string' && options.gradescope === undefined && positional.length === 0) {
    const s = exportStudent(options.student, { force });
    console.log(`Student export written to ${shown(s.out)}: ${s.files} files, exercises ${s.exercises.join(', ')}; no solutions, no hidden checks.`);
    console.log(`Try it: cd ${shown(s.out)} && pnpm install && pnpm grade ex01   (it says: hidden checks: not present)`);
    return 0;
  }
  if (typeof options.gradescope === 'string' && options.student === undefined && positional.length === 1) {
    const s = exportGradescope(options.gradescope, positional[0]!, { force });
    console.log(`Gradescope autograder for ${s.exercise} written to ${shown(s.zip)} (${s.files} files, ${(s.bytes / 1024).toFixed(0)} KiB).`);
    console.log('Upload it as the assignment\'s autograder (Ubuntu base image). Students submit their src/ files, their src/ folder, or the whole exercise folder.');
    return 0;
  }
  throw new UsageError(`kit export needs --student OUT, or --gradescope exNN OUT.zip\n${USAGE}`);
}

async function cmdSync(argv: string[]): Promise<number> {
  parseArgs(argv, [], [], USAGE);
  const folders = exerciseFolderNames(REPO);
  const turbo = syncTurbo(REPO, folders);
  const scripts = syncPackageScripts(REPO, folders);
  console.log(turbo || scripts.length ? `Updated ${[...(turbo ? ['turbo.json'] : []), ...scripts].join(', ')}.` : 'turbo.json and the exercise packages are in sync.');
  return 0;
}

const COMMANDS: Record<string, (argv: string[]) => Promise<number>> = { new: cmdNew, check: cmdCheck, 'check-task': cmdCheckTask, export: cmdExport, sync: cmdSync };

async function main(): Promise<number> {
  const [command, ...rest] = process.argv.slice(2);
  if (!command || command === 'help' || command === '--help') {
    console.log(USAGE);
    return command ? 0 : 2;
  }
  const run = COMMANDS[command];
  if (!run) throw new UsageError(`unknown kit command '${command}'\n${USAGE}`);
  try {
    return await run(rest);
  } catch (e) {
    if (!(e instanceof UserError)) throw e;
    console.error(`kit ${command}: ${e.message}`);
    return e.exitCode;
  }
}

await runCli(main);
