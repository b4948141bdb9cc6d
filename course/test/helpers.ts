/**
 * Test helpers: scratch student folders, scratch copies of the course
 * (with node_modules linked so that its modules resolve), and the CLIs run
 * through execa as a student runs them.
 */
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { execa } from 'execa';
import { COURSE_DIR, REPO_ROOT } from '../src/paths.ts';

/** A fresh empty folder, removed after the test file by `cleanup`. */
export function scratch(prefix = 'dtlab-course-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}

const made: string[] = [];

/** Removes every scratch folder made so far. */
export function cleanup(): void {
  for (const d of made.splice(0)) rmSync(d, { recursive: true, force: true });
}

/**
 * A scratch repository with a copy of the course and of the exercises'
 * manifests, whose modules resolve @dtlab/* through a link to this
 * package's node_modules.
 */
export function scratchRepo(): string {
  const root = scratch('dtlab-repo-');
  cpSync(COURSE_DIR, join(root, 'course'), { recursive: true, filter: (src) => !/node_modules|\.test-tmp|\.vitest-results|\.turbo/.test(src) });
  symlinkSync(join(COURSE_DIR, 'node_modules'), join(root, 'node_modules'));
  // What the course's modules and readings point at: the TypeScript settings, every exercise's manifest and README, the collectives README.
  const exercises = readdirSync(join(REPO_ROOT, 'exercises')).filter((ex) => existsSync(join(REPO_ROOT, 'exercises', ex, 'exercise.json')));
  for (const rel of ['tsconfig.base.json', 'packages/collectives/README.md', ...exercises.flatMap((ex) => [`exercises/${ex}/exercise.json`, `exercises/${ex}/README.md`])]) {
    mkdirSync(dirname(join(root, rel)), { recursive: true });
    cpSync(join(REPO_ROOT, rel), join(root, rel));
  }
  return root;
}

/** Writes `text` to `file`, creating its folder. */
export function write(file: string, text: string): void {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, text);
}

/** What a command printed and how it ended. */
export interface CliResult {
  exitCode: number | undefined;
  stdout: string;
  stderr: string;
}

/** Runs a course CLI (`course`, `quiz`, `experiment`) as `pnpm <name>` does, without a terminal. */
export async function cli(name: 'course' | 'quiz' | 'experiment', args: string[], opts: { env?: Record<string, string> } = {}): Promise<CliResult> {
  const r = await execa('node', ['--import', 'tsx', join(COURSE_DIR, 'src', 'cli', `${name}.ts`), ...args], { cwd: REPO_ROOT, reject: false, env: { NO_COLOR: '1', ...opts.env }, timeout: 120_000 });
  return { exitCode: r.exitCode, stdout: String(r.stdout), stderr: String(r.stderr) };
}
