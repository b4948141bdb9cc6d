/**
 * `pnpm grade [exNN] [--submission DIR] [--out FILE] [--format rubric|gradescope|junit] [--seed N] [--no-hidden] [--typecheck] [--watch] [--html FILE]`
 *
 * Grades one exercise and prints a report; exits 0 when every check passed,
 * 1 when one failed, 2 when grading itself failed. With --typecheck the
 * submission is also type-checked meanwhile, as batch grading always does:
 * type errors become a note in the report and the rubric (and the flag
 * 'type-errors'), never points. It is not the default because it takes about
 * two seconds more. With --watch it grades again on every save of the
 * submission's src/ (as rustlings' watch mode does) and, once it passes,
 * says what to do next; Ctrl-C ends it. Without an exercise it lists the
 * exercises by chapter, with their last scores. --html FILE also writes
 * the report as one self-contained HTML page, with a timeline of each
 * failing check's run (html-report.ts).
 */
import { randomInt } from 'node:crypto';
import { existsSync, watch as fsWatch } from 'node:fs';
import { join, relative } from 'node:path';
import type { Chapter } from '@dtlab/course';
import { findExercise, listExercises, type Exercise } from '../exercises.ts';
import { gradeSubmission } from '../grade.ts';
import { sweepLeftovers } from '../leftovers.ts';
import { formatReport, palette } from '../report.ts';
import { boundedRubric, validateRubric, writeAtomic, writeRubric, type Rubric } from '../rubric.ts';
import { gradescopeResults, writeGradescopeResults } from '../export/gradescope.ts';
import { junitXml, writeJunit } from '../export/junit.ts';
import { defaultRubricPath, hintsShown, lastRubric } from '../grade-records.ts';
import { recordTypeCheck, TypeChecker } from '../typecheck.ts';
import { parseArgs, runCli, UsageError } from './args.ts';
import { htmlReport } from '../html-report.ts';

const USAGE = 'usage: pnpm grade [exNN] [--submission DIR] [--out FILE] [--format rubric|gradescope|junit] [--seed N] [--no-hidden] [--typecheck] [--watch] [--html FILE]';

/** The exercises by chapter of the course (those in no chapter last), each with its last score. */
async function progressView(color: boolean): Promise<number> {
  const c = palette(color);
  const exercises = listExercises();
  const row = (e: Exercise) => {
    const r = lastRubric(e.manifest.id);
    const status = !r ? c.dim('not graded yet') : r.status === 'passed' ? c.green(`passed ${r.score}/${r.maxScore}`) : r.status === 'failed' ? c.red(`failed ${r.score}/${r.maxScore}`) : c.yellow('grading error');
    const hints = hintsShown(e.manifest.id);
    return `    ${e.manifest.id}  ${e.manifest.title.padEnd(40)} ${status}${hints ? c.dim(` · ${hints} hint${hints > 1 ? 's' : ''} shown`) : ''}`;
  };
  const lines = [c.bold('dtlab exercises, by chapter') + c.dim(' (pnpm grade exNN grades one; pnpm course shows the whole course)')];
  const placed = new Set<string>();
  for (const chapter of await courseChapters()) {
    lines.push(`  ${c.bold(`${chapter.number}. ${chapter.title}`)}`);
    const mine = chapter.exercises.map((f) => exercises.find((e) => e.folder === f)).filter((e): e is Exercise => e !== undefined);
    mine.forEach((e) => placed.add(e.folder));
    lines.push(...(mine.length ? mine.map(row) : [c.dim('    (no exercises yet)')]));
  }
  const rest = exercises.filter((e) => !placed.has(e.folder));
  if (rest.length) lines.push(`  ${c.bold('In no chapter')}`, ...rest.map(row));
  if (exercises.length === 0) lines.push('  (no exercises found)');
  console.log(lines.join('\n'));
  return 0;
}

/**
 * The course package, loaded on demand: grading itself does not need it,
 * and starts faster without it. Through require under bin/grade.cjs (tsx's
 * require hook compiles it; import() would reach Node's own loader, which
 * cannot), through import() when this file is run as an ES module.
 */
async function coursePackage(): Promise<typeof import('@dtlab/course')> {
  const viaRequire = typeof require === 'function' && require.extensions?.['.ts'] !== undefined;
  return viaRequire ? (require('@dtlab/course') as typeof import('@dtlab/course')) : await import('@dtlab/course');
}

/** The course's chapters, or none if the course manifest cannot be read (the exercises are then listed alone). */
async function courseChapters(): Promise<Chapter[]> {
  try {
    const { loadCourse } = await coursePackage();
    return loadCourse().chapters;
  } catch {
    return [];
  }
}

/**
 * What to do once `exercise` passes: name its failure mechanism and read why
 * the fix works, then the course's next step for this student (their
 * progress, when they graded their own work) or the exercise that follows in
 * the course.
 */
async function nextAfterPass(exercise: Exercise, ownWork: boolean): Promise<string> {
  const explain = `pnpm explain ${exercise.manifest.id} (name the failure mechanism, then read why the fix works)`;
  try {
    const { courseProgress, loadCourse } = await coursePackage();
    const course = loadCourse();
    if (ownWork) return `${explain}; then: ${(await courseProgress(course, course.root)).next}`;
    const order = course.chapters.flatMap((ch) => ch.exercises);
    const following = order[order.indexOf(exercise.folder) + 1];
    const ex = following ? listExercises().find((e) => e.folder === following) : undefined;
    return ex ? `${explain}; then pnpm grade ${ex.manifest.id} (${ex.manifest.title})` : explain;
  } catch {
    return explain;
  }
}

interface GradeRun {
  exercise: Exercise;
  submissionDir: string;
  seed: number | undefined;
  format: 'rubric' | 'gradescope' | 'junit';
  out: string;
  options: Record<string, string | boolean | undefined>;
  color: boolean;
}

async function main(): Promise<number> {
  const { positional, options } = parseArgs(process.argv.slice(2), ['submission', 'out', 'format', 'seed', 'html'], ['no-hidden', 'typecheck', 'watch', 'help'], USAGE);
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
  let seed: number | undefined;
  if (options.seed !== undefined) {
    seed = Number(options.seed);
    if (!Number.isInteger(seed) || seed < 0) throw new UsageError(`--seed must be a non-negative integer, got ${options.seed}`);
  }
  const id = exercise.manifest.id;
  const submissionDir = (options.submission as string | undefined) ?? exercise.dir;
  if (!existsSync(submissionDir)) throw new UsageError(`--submission ${submissionDir}: no such folder (a submission is a folder holding the exercise's src/)`);
  const out = (options.out as string | undefined) ?? (format === 'rubric' ? defaultRubricPath(id) : format === 'junit' ? defaultRubricPath(`${id}.junit`).replace(/\.json$/, '.xml') : defaultRubricPath(`${id}.gradescope`));
  sweepLeftovers(); // private copies of a grading killed with kill -9
  const run: GradeRun = { exercise, submissionDir, seed, format, out, options, color };
  if (options.watch) return watch(run);
  return (await gradeOnce(run)).exitCode;
}

/** Grades once and prints the report; the exit code says passed (0), failed (1) or grading error (2). */
async function gradeOnce(run: GradeRun): Promise<{ exitCode: number; rubric: Rubric }> {
  const { exercise, submissionDir, format, out, options, color } = run;
  const id = exercise.manifest.id;
  // A new seed each time unless one is given: the checks draw their inputs from it.
  const seed = run.seed ?? randomInt(0, 2 ** 31);
  const shown = hintsShown(id);
  const live = Boolean(process.stderr.isTTY);
  const typeChecker = options.typecheck ? new TypeChecker() : null;
  const typed = typeChecker?.check(submissionDir, exercise);
  let rubric = await gradeSubmission({
    exercise,
    submissionDir,
    seed,
    hidden: !options['no-hidden'],
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
  if (typeof options.html === 'string') writeAtomic(options.html, htmlReport(boundedRubric(rubric), { title: exercise.manifest.title }));
  console.log(formatReport(rubric, { color, title: exercise.manifest.title, rubricPath: relative(process.cwd(), out) || out, exerciseId: id, hintsLeft: exercise.manifest.hints.length - shown }));
  return { exitCode: rubric.status === 'passed' ? 0 : rubric.status === 'failed' ? 1 : 2, rubric };
}

/** How long the files must be quiet after a change before grading again: one save of an editor is several events. */
const SETTLE_MS = 300;

/**
 * Grades, then again after every change under the submission's src/, until
 * Ctrl-C; a change during a grading starts one more right after it. Says
 * "next: ..." after a pass.
 */
async function watch(run: GradeRun): Promise<number> {
  const src = join(run.submissionDir, 'src');
  if (!existsSync(src)) throw new UsageError(`--watch: ${src} does not exist (a submission is a folder holding the exercise's src/)`);
  const c = palette(run.color);
  const ownWork = run.options.submission === undefined && run.options.out === undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let grading = false;
  let again = false;
  let stop!: () => void;
  const stopped = new Promise<void>((r) => (stop = r));
  const gradeNow = async () => {
    if (grading) {
      again = true;
      return;
    }
    grading = true;
    do {
      again = false;
      if (run.color) process.stdout.write('\x1b[2J\x1b[H');
      const { rubric } = await gradeOnce(run);
      if (rubric.status === 'passed') console.log(c.green(`next: ${await nextAfterPass(run.exercise, ownWork)}`));
      console.log(c.dim(`\nwatching ${relative(process.cwd(), src) || src} for changes · Ctrl-C to stop`));
    } while (again);
    grading = false;
  };
  // Recursive watching of a folder tree is built into Node 20 on Linux, macOS and Windows.
  const watcher = fsWatch(src, { recursive: true }, () => {
    clearTimeout(timer);
    timer = setTimeout(() => void gradeNow(), SETTLE_MS);
  });
  const onSignal = () => stop();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  await gradeNow();
  await stopped;
  watcher.close();
  clearTimeout(timer);
  return 0;
}

void runCli(main);
