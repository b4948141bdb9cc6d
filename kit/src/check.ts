/**
 * `pnpm kit check`: the curriculum checks itself.
 *
 * Each exercise is checked by its own turbo task (`kit:check`, see
 * turbo.ts), which runs `checkExercise`: the static checks of structure.ts,
 * then the starter and the solution graded under three fixed seeds. The task
 * writes its report to `exercises/<folder>/.kit/check.json`, a turbo output,
 * so an exercise whose inputs did not change is not graded again. Around the
 * tasks, `runKitCheck` checks the curriculum as a whole and the student
 * export, and collects the reports for the summary.
 */
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { type Exercise, maxPoints, writeAtomic, graderVersion, UserError } from '@dtlab/grader/grading';
import { checkCurriculum, exerciseFolderNames, resolveFolder } from './curriculum.ts';
import { Findings, type Finding } from './findings.ts';
import { gradeSolution, gradeStarter, KIT_SEEDS, type RunSummary } from './grading.ts';
import { KIT_RESULT_DIR, KIT_RESULT_FILE, REPO, type KitLayout } from './layout.ts';
import { checkStructure } from './structure.ts';
import { runKitTasks } from './turbo.ts';
import { studentExportLeaks } from './export-plan.ts';
import { checkCourse } from '@dtlab/course';

/** The verdict on one exercise, as its `kit:check` task writes it. */
export interface ExerciseReport {
  schemaVersion: 1;
  exercise: string;
  title: string | null;
  checkedAt: string;
  durationMs: number;
  graderVersion: string;
  seeds: number[];
  findings: Finding[];
  /** The starter's gradings (null when it could not be graded). */
  starter: RunSummary[] | null;
  solution: RunSummary[] | null;
  /** The manifest's total, the sum of its checks' points, and the maximum a graded rubric gave. */
  points: { total: number | null; sum: number; graded: number | null } | null;
}

/** Where exercise `folder`'s task writes its report. */
export function reportPath(layout: KitLayout, folder: string): string {
  return join(layout.exercises, folder, KIT_RESULT_DIR, KIT_RESULT_FILE);
}

/** Checks one exercise: static checks, then the starter and the solution graded under `seeds`. */
export async function checkExercise(folder: string, layout: KitLayout = REPO, seeds: readonly number[] = KIT_SEEDS): Promise<ExerciseReport> {
  const started = Date.now();
  const { findings, manifest } = await checkStructure(folder, layout);
  let starter: RunSummary[] | null = null;
  let solution: RunSummary[] | null = null;
  if (manifest) {
    const exercise: Exercise = { folder, dir: join(layout.exercises, folder), manifest };
    const hasEntries = (dir: string) => manifest.entry.every((e) => existsSync(join(dir, e.file)));
    if (hasEntries(exercise.dir)) starter = await gradeStarter(exercise, findings, seeds);
    if (hasEntries(join(layout.solutions, folder))) solution = await gradeSolution(exercise, layout.solutions, findings, seeds);
  }
  const sum = manifest ? maxPoints(manifest) : 0;
  const graded = solution?.[0]?.maxScore ?? starter?.[0]?.maxScore ?? null;
  if (manifest && graded !== null && graded !== (manifest.totalPoints ?? sum)) findings.error('points', `a graded rubric is out of ${graded}, but exercise.json's total is ${manifest.totalPoints ?? sum}`);
  return {
    schemaVersion: 1,
    exercise: folder,
    title: manifest?.title ?? null,
    checkedAt: new Date(started).toISOString(),
    durationMs: Date.now() - started,
    graderVersion: graderVersion(),
    seeds: [...seeds],
    findings: findings.list,
    starter,
    solution,
    points: manifest ? { total: manifest.totalPoints ?? null, sum, graded } : null,
  };
}

/** Writes `report` where the exercise's task output goes. */
export function writeExerciseReport(layout: KitLayout, report: ExerciseReport): void {
  writeAtomic(reportPath(layout, report.exercise), JSON.stringify(report, null, 2) + '\n');
}

/** Reads exercise `folder`'s report, or null when there is none. */
export function readExerciseReport(layout: KitLayout, folder: string): ExerciseReport | null {
  try {
    return JSON.parse(readFileSync(reportPath(layout, folder), 'utf8')) as ExerciseReport;
  } catch {
    return null;
  }
}

/** Options of `pnpm kit check`. */
export interface KitCheckOptions {
  layout?: KitLayout;
  /** Exercises to check (`ex01`, `1` or a folder); default all. */
  only?: string[];
  /** Exercises turbo runs at once (default 2: each grading starts up to 8 rank workers). */
  concurrency?: number;
  /** Regrade even what turbo has cached. */
  force?: boolean;
  /** Check in this process, one exercise after another, without turbo. */
  local?: boolean;
  /** Grading seeds (only with `local`: turbo's tasks always use KIT_SEEDS, so that their results may be cached). */
  seeds?: readonly number[];
}

/** The outcome of `pnpm kit check`. */
export interface KitCheckResult {
  startedAt: number;
  folders: string[];
  /** Each checked exercise's report (null: its task wrote none). */
  reports: Map<string, ExerciseReport | null>;
  /** Findings of all kinds, curriculum first. */
  findings: Finding[];
}

/** A name on the command line that is no exercise. */
export class UnknownKitExerciseError extends UserError {
  override name = 'UsageError';
}

/** Runs `pnpm kit check`: the curriculum checks, then every exercise's task (through turbo unless `local`). */
export async function runKitCheck(opts: KitCheckOptions = {}): Promise<KitCheckResult> {
  const layout = opts.layout ?? REPO;
  const startedAt = Date.now();
  const all = exerciseFolderNames(layout);
  const folders = opts.only?.length ? [] : all;
  for (const name of opts.only ?? []) {
    const folder = resolveFolder(layout, name);
    if (!folder) throw new UnknownKitExerciseError(`no exercise named '${name}'. Exercises: ${all.join(', ')}`);
    if (!folders.includes(folder)) folders.push(folder);
  }
  const curriculum = checkCurriculum(layout);
  // The course as a whole (chapters, readings, banks, experiments): @dtlab/course checks itself.
  const course = (await checkCourse(layout.root, { runExperiments: true })).map((f): Finding => ({
    level: f.level,
    check: 'course',
    exercise: f.subject && /^ex\d\d-/.test(f.subject) ? f.subject : null,
    message: `${f.chapter !== null ? `chapter ${f.chapter}: ` : ''}${f.subject && !/^ex\d\d-/.test(f.subject) ? `${f.subject}: ` : ''}${f.message}`,
  }));
  const exportFindings = new Findings(null);
  for (const leak of studentExportLeaks(layout)) exportFindings.error('leaks', `the student export would leak: ${leak}`);
  for (const folder of folders) rmSync(reportPath(layout, folder), { force: true });
  if (opts.local) {
    for (const folder of folders) writeExerciseReport(layout, await checkExercise(folder, layout, opts.seeds ?? KIT_SEEDS));
  } else if (folders.length) {
    runKitTasks(layout, folders, { concurrency: opts.concurrency ?? 2, force: opts.force ?? false });
  }
  const reports = new Map(folders.map((f) => [f, readExerciseReport(layout, f)] as const));
  const missing = [...reports].flatMap(([folder, r]): Finding[] =>
    r ? [] : [{ level: 'error', check: 'task', exercise: folder, message: `its kit:check task wrote no report (see turbo's log above; is "kit:check" in exercises/${folder}/package.json and turbo.json?)` }],
  );
  const findings = [...curriculum.list, ...course, ...exportFindings.list, ...missing, ...[...reports.values()].flatMap((r) => r?.findings ?? [])];
  return { startedAt, folders, reports, findings };
}
