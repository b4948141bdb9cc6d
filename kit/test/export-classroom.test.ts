/**
 * The GitHub Classroom workflow in the student export: the file is there,
 * and each step's command, run in the export the way the command grader runs
 * it (through a shell, with only PATH and HOME and the few variables the
 * action sets), fails on the starter and passes on the reference solution.
 * For ex01 only, to save time; the workflow's shape is tested in
 * grader/test/export-classroom.test.ts.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLASSROOM_ACTIONS, CLASSROOM_WORKFLOW_PATH } from '@dtlab/grader/grading';
import { exportStudent } from '../src/export-student.ts';
import { REPO } from '../src/layout.ts';
import { pnpmCommand } from '../src/pnpm.ts';
import { pnpm } from './helpers.ts';

const EX01 = 'ex01-allreduce-mean';
const tmp = mkdtempSync(join(tmpdir(), 'dtlab-kit-classroom-'));
const out = join(tmp, 'student');
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** A folder with a `pnpm` that runs the repository's pnpm, named by absolute path (this `pnpm` comes first on PATH). */
function pnpmBin(): string {
  const bin = join(tmp, 'bin');
  const shim = join(bin, 'pnpm');
  if (existsSync(shim)) return bin;
  mkdirSync(bin, { recursive: true });
  const [cmd, ...rest] = pnpmCommand(REPO.root);
  const found = cmd!.includes('/') ? cmd! : (process.env.PATH ?? '').split(delimiter).map((dir) => join(dir, cmd!)).find((p) => p.startsWith('/') && existsSync(p));
  if (!found) throw new Error(`no ${cmd} on PATH`);
  const quoted = [found, ...rest].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  writeFileSync(shim, `#!/bin/sh\nexec ${quoted} "$@"\n`);
  chmodSync(shim, 0o755);
  return bin;
}

/** Runs `command` as classroom-resources/autograding-command-grader does: a shell, and only these variables. */
function runAsCommandGrader(command: string): { status: number | null; out: string } {
  const env = { PATH: `${pnpmBin()}${delimiter}${process.env.PATH ?? ''}`, HOME: process.env.HOME ?? tmp, FORCE_COLOR: 'true', DOTNET_CLI_HOME: '/tmp', DOTNET_NOLOGO: 'true' };
  const r = spawnSync('/bin/sh', ['-c', command], { cwd: out, env, encoding: 'utf8', maxBuffer: 16 * 1024 * 1024, timeout: 600_000 });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

type Step = { id?: string; uses?: string; with?: Record<string, unknown> };

describe('the GitHub Classroom workflow of the student export', () => {
  let command = '';
  beforeAll(() => {
    exportStudent(out);
    const install = pnpm(out, ['install', '--frozen-lockfile', '--offline']);
    if (install.status !== 0) throw new Error(`pnpm install in the export failed:\n${install.out}`);
    const workflow = parse(readFileSync(join(out, CLASSROOM_WORKFLOW_PATH), 'utf8')) as { jobs: Record<string, { steps: Step[] }> };
    const step = workflow.jobs['run-autograding-tests']!.steps.find((s) => s.uses === CLASSROOM_ACTIONS.grader && s.id === 'ex01');
    command = String(step?.with?.command ?? '');
  }, 600_000); // an export and an install

  it("holds the ex01 step, whose command fails on the starter", () => {
    expect(command).toBe('pnpm grade ex01 --no-hidden');
    const r = runAsCommandGrader(command);
    expect(r.out).toMatch(/FAIL {2}three-ranks/);
    expect(r.status, r.out).toBe(1);
  });

  it('and passes on the reference solution', () => {
    cpSync(join(REPO.solutions, EX01, 'src'), join(out, 'exercises', EX01, 'src'), { recursive: true, force: true });
    const r = runAsCommandGrader(command);
    expect(r.out).toMatch(/score 4\/4 · passed/);
    expect(r.status, r.out).toBe(0);
  });
});
