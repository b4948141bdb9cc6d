/**
 * `pnpm kit check` runs each exercise's checks as a turbo task, `kit:check`,
 * so exercises run in parallel and an unchanged exercise comes from turbo's
 * cache. Each exercise has its own entry in the root turbo.json, because its
 * inputs lie outside its folder: its solution, its public and hidden check
 * modules, and the grader and libraries that grade it.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { delimiter, dirname, join, relative, sep } from 'node:path';
import { coursePackages, ROOT } from '@dtlab/grader/grading';
import { formatJson } from './json-format.ts';
import { onPath, pinnedPnpm, QUIET_TURBO } from './pnpm.ts';
import { KIT_RESULT_DIR, packageNames, type KitLayout } from './layout.ts';

/** The `kit:check` script of every exercise package: checks that one exercise (cwd) and writes `.kit/check.json`. */
export const KIT_TASK_SCRIPT = 'node --import tsx ../../kit/src/cli/kit.ts check-task';
export const KIT_TASK = 'kit:check';

/** The key of exercise `folder`'s task in turbo.json. */
export function kitTaskKey(folder: string): string {
  return `${packageNames(folder).exercise}#${KIT_TASK}`;
}

/**
 * The turbo.json entry of exercise `folder`'s `kit:check` task: what a
 * grading of its starter and solution reads. Beside the exercise's own
 * folder, its solution and its check modules, that is the grader and the
 * course packages it depends on (the one list, coursePackages, that the
 * grader's version and its compile cache follow too).
 */
export function kitTaskEntry(folder: string): { inputs: string[]; outputs: string[] } {
  const r = '$TURBO_ROOT$';
  const packages = coursePackages().map((p) => relative(ROOT, p.dir).split(sep).join('/'));
  return {
    inputs: [
      '$TURBO_DEFAULT$',
      `${r}/solutions/${folder}/src/**`,
      `${r}/solutions/${folder}/package.json`,
      `${r}/solutions/${folder}/tsconfig.json`,
      `${r}/grader/checks/${folder}/**`,
      `${r}/grader/hidden/${folder}/**`,
      `${r}/grader/src/**`,
      `${r}/grader/schema/**`,
      `${r}/grader/package.json`,
      ...packages.flatMap((p) => [`${r}/${p}/src/**`, `${r}/${p}/package.json`]),
      `${r}/tsconfig.base.json`,
    ],
    outputs: [`${KIT_RESULT_DIR}/**`],
  };
}

type TurboJson = { tasks?: Record<string, unknown> } & Record<string, unknown>;

function readTurbo(layout: KitLayout): TurboJson {
  return JSON.parse(readFileSync(layout.turboJson, 'utf8')) as TurboJson;
}

const isKitKey = (k: string) => k.endsWith(`#${KIT_TASK}`) || k === KIT_TASK;

/** What is wrong with turbo.json's `kit:check` entries for `folders` (empty: nothing). */
export function turboProblems(layout: KitLayout, folders: readonly string[]): string[] {
  const tasks = readTurbo(layout).tasks ?? {};
  const problems: string[] = [];
  for (const folder of folders) {
    const key = kitTaskKey(folder);
    if (!(key in tasks)) problems.push(`turbo.json has no "${key}" task, so \`pnpm kit check\` cannot run ${folder}`);
    else if (JSON.stringify(tasks[key]) !== JSON.stringify(kitTaskEntry(folder))) problems.push(`turbo.json's "${key}" is not the kit's entry (its inputs decide when turbo's cache may be used)`);
  }
  const known = new Set(folders.map(kitTaskKey));
  for (const key of Object.keys(tasks)) if (isKitKey(key) && key !== KIT_TASK && !known.has(key)) problems.push(`turbo.json has "${key}", but there is no such exercise`);
  return problems;
}

/** Writes the `kit:check` entry of every folder in `folders` into turbo.json and drops entries of exercises that are gone; returns whether it changed. */
export function syncTurbo(layout: KitLayout, folders: readonly string[]): boolean {
  const before = readFileSync(layout.turboJson, 'utf8');
  const turbo = JSON.parse(before) as TurboJson;
  const tasks: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(turbo.tasks ?? {})) if (!isKitKey(k)) tasks[k] = v;
  for (const f of [...folders].sort()) tasks[kitTaskKey(f)] = kitTaskEntry(f);
  const after = formatJson({ ...turbo, tasks });
  if (after !== before) writeFileSync(layout.turboJson, after);
  return after !== before;
}

/** turbo.json without the kit's tasks (for a student export). */
export function withoutKitTasks(turboText: string): string {
  const turbo = JSON.parse(turboText) as TurboJson;
  const tasks = Object.fromEntries(Object.entries(turbo.tasks ?? {}).filter(([k]) => !isKitKey(k)));
  return formatJson({ ...turbo, tasks });
}

/** An environment in which turbo finds pnpm: pnpm's own folder first when pnpm started us. */
function turboEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...QUIET_TURBO };
  const execPath = env.npm_execpath;
  if (execPath && /pnpm/.test(execPath)) {
    for (const dir of [dirname(execPath), join(dirname(execPath), '..', '..', '.bin'), join(dirname(execPath), '..', 'bin')]) {
      if (existsSync(join(dir, 'pnpm'))) env.PATH = `${dir}${delimiter}${env.PATH ?? ''}`;
    }
  }
  return env;
}

/** Options of a turbo run of the kit's tasks. */
export interface TurboRunOptions {
  concurrency: number;
  /** Ignore turbo's cache (`--force`). */
  force?: boolean;
}

/** Runs `turbo run kit:check` for `folders` (continuing past failures); returns turbo's exit code. */
export function runKitTasks(layout: KitLayout, folders: readonly string[], opts: TurboRunOptions): number {
  const env = turboEnv();
  const args = ['run', KIT_TASK, '--continue', `--concurrency=${opts.concurrency}`, '--output-logs=errors-only', ...(opts.force ? ['--force'] : []), ...folders.map((f) => `--filter=./exercises/${f}`)];
  const turbo = join(layout.root, 'node_modules', '.bin', 'turbo');
  const pinned = pinnedPnpm(layout.root);
  // turbo runs each task with the package manager, so pnpm must be on PATH; when it is not, run turbo through pnpm.
  const r = onPath('pnpm', env) || !pinned
    ? spawnSync(turbo, args, { cwd: layout.root, env, stdio: 'inherit' })
    : spawnSync('npx', ['-y', pinned, 'exec', 'turbo', ...args], { cwd: layout.root, env, stdio: 'inherit' });
  return r.status ?? 2;
}
