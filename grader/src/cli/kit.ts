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
 * and two that other tools run: `check-task` (the turbo task of one
 * exercise, run in its folder) and `autograde exNN --root DIR` (a Gradescope
 * autograder's grading step). Exit codes: 0 done, 1 the curriculum or the
 * export has a problem, 2 the command itself could not run.
 */
import { basename, dirname, relative, resolve } from 'node:path';
import { findExercise } from '../exercises.ts';
import { palette } from '../report.ts';
import { autograde } from '../kit/autograder.ts';
import { checkExercise, runKitCheck, writeExerciseReport } from '../kit/check.ts';
import { exerciseFolderNames } from '../kit/curriculum.ts';
import { exportGradescope } from '../kit/export-gradescope.ts';
import { exportStudent } from '../kit/export-student.ts';
import { REPO } from '../kit/layout.ts';
import { installWorkspace, nextStepsText, scaffoldExercise } from '../kit/scaffold.ts';
import { formatKitCheck } from '../kit/summary.ts';
import { syncPackageScripts } from '../kit/sync.ts';
import { syncTurbo } from '../kit/turbo.ts';
import { parseArgs, runCli, UsageError } from './args.ts';

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

async function cmdAutograde(argv: string[]): Promise<number> {
  const { positional, options } = parseArgs(argv, ['root'], [], USAGE);
  if (positional.length !== 1) throw new UsageError('usage: kit autograde exNN [--root /autograder]');
  const outcome = autograde(findExercise(positional[0]!), String(options.root ?? process.env.AUTOGRADER_ROOT ?? '/autograder'));
  console.log(`results written to ${outcome.resultsFile}`);
  return outcome.gradeExit === null ? 1 : 0;
}

const COMMANDS: Record<string, (argv: string[]) => Promise<number>> = { new: cmdNew, check: cmdCheck, 'check-task': cmdCheckTask, export: cmdExport, sync: cmdSync, autograde: cmdAutograde };
const KIT_ERRORS = new Set(['ScaffoldError', 'ExportError', 'ExportLeakError', 'TemplateError']);

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
    if (!KIT_ERRORS.has((e as Error)?.name)) throw e;
    console.error(`kit ${command}: ${(e as Error).message}`);
    return (e as Error).name === 'ExportLeakError' ? 1 : 2;
  }
}

await runCli(main);
