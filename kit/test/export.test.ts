/**
 * `pnpm kit export`, end to end. The student export is a repository of its
 * own: no solutions, no hidden checks, a lockfile that a frozen, offline
 * install accepts, and `pnpm grade ex01` in it grades the starter with the
 * public checks only. The Gradescope zip, unpacked into a fake /autograder
 * in a temporary folder, installs with its setup.sh and grades submissions
 * of every shape with run_autograder, always leaving a valid results.json.
 */
import { chmodSync, cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { unzipSync } from 'fflate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportStudent } from '../src/export-student.ts';
import { exportGradescope } from '../src/export-gradescope.ts';
import { walkFiles } from '../src/leaks.ts';
import { REPO } from '../src/layout.ts';
import { pnpm } from './helpers.ts';

const EX01 = 'ex01-allreduce-mean';
const tmp = mkdtempSync(join(tmpdir(), 'dtlab-kit-export-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('pnpm kit export --student', () => {
  const out = join(tmp, 'student');
  beforeAll(() => {
    exportStudent(out);
  });

  it('holds the workspace, the libraries, the exercises and the public grader, and nothing secret', () => {
    const files = walkFiles(out);
    for (const f of ['package.json', 'pnpm-workspace.yaml', 'pnpm-lock.yaml', 'turbo.json', 'tsconfig.base.json', 'README.md', 'scripts/test.ts', 'packages/tensor/src/index.ts', `exercises/${EX01}/src/allreduce-mean.ts`, `grader/checks/${EX01}/checks.ts`, 'grader/src/cli/grade.ts', 'grader/bin/grade.cjs']) {
      expect(files, f).toContain(f);
    }
    expect(files.filter((f) => /^(solutions|grader\/hidden|grader\/templates|docs|\.ci)\//.test(f) || /kit-.*\.test\.ts$|exercises\.test\.ts$/.test(f))).toEqual([]);
    expect(readFileSync(join(out, 'pnpm-lock.yaml'), 'utf8')).not.toMatch(/^ {2}solutions\//m);
  });

  it('installs with --frozen-lockfile --offline, and `pnpm grade ex01` grades the starter on public checks only', () => {
    const install = pnpm(out, ['install', '--frozen-lockfile', '--offline']);
    expect(install.status, install.out).toBe(0);
    const grade = pnpm(out, ['grade', 'ex01', '--seed', '1']);
    expect(grade.out).toContain('hidden checks: not present (public checks only)');
    expect(grade.out).toMatch(/FAIL {2}three-ranks/);
    expect(grade.status, grade.out).toBe(1);
  });
});

describe('pnpm kit export --gradescope', () => {
  const zip = join(tmp, 'ex01-autograder.zip');
  const ag = join(tmp, 'autograder');
  const source = join(ag, 'source');
  const submission = join(ag, 'submission');
  const results = join(ag, 'results', 'results.json');
  const runAutograder = () => spawnSync('bash', [join(source, 'run_autograder')], { env: { ...process.env, AUTOGRADER_ROOT: ag, NO_COLOR: '1' }, encoding: 'utf8' });
  const submit = (files: Record<string, string>) => {
    rmSync(submission, { recursive: true, force: true });
    mkdirSync(submission, { recursive: true });
    for (const [p, text] of Object.entries(files)) {
      mkdirSync(dirname(join(submission, p)), { recursive: true });
      writeFileSync(join(submission, p), text);
    }
  };

  beforeAll(() => {
    exportGradescope('ex01', zip);
    for (const [p, data] of Object.entries(unzipSync(readFileSync(zip)))) {
      mkdirSync(dirname(join(source, p)), { recursive: true });
      writeFileSync(join(source, p), data);
    }
    for (const s of ['setup.sh', 'run_autograder']) chmodSync(join(source, s), 0o755);
  });

  it('holds setup.sh, run_autograder and the repository with this exercise\'s hidden checks, without solutions', () => {
    const entries = Object.keys(unzipSync(readFileSync(zip)));
    expect(entries).toEqual(expect.arrayContaining(['setup.sh', 'run_autograder', `dtlab/grader/hidden/${EX01}/checks.ts`, 'dtlab/pnpm-lock.yaml']));
    expect(entries.filter((e) => e.startsWith('dtlab/solutions/') || (e.startsWith('dtlab/grader/hidden/') && !e.startsWith(`dtlab/grader/hidden/${EX01}/`)))).toEqual([]);
  });

  it('installs with setup.sh and grades a submission of the whole exercise folder, hidden checks included', () => {
    const setup = spawnSync('bash', [join(source, 'setup.sh')], { encoding: 'utf8', env: process.env });
    expect(setup.status, `${setup.stdout}${setup.stderr}`).toBe(0);
    submit({ [`${EX01}/src/allreduce-mean.ts`]: readFileSync(join(REPO.solutions, EX01, 'src', 'allreduce-mean.ts'), 'utf8'), [`${EX01}/README.md`]: 'mine' });
    const r = runAutograder();
    expect(r.status, `${r.stdout}${r.stderr}`).toBe(0);
    const json = JSON.parse(readFileSync(results, 'utf8')) as { score: number; tests: { name: string; visibility: string }[] };
    expect(json.score).toBe(10);
    expect(json.tests.filter((t) => t.visibility === 'after_published').map((t) => t.name)).toEqual(['seed-experiment: Data-parallel SGD step equals the single-process step (1 to 5 ranks)', 'edge-shapes: Empty, one-element and 3-D tensors; one rank']);
  });

  it('grades loose files (the starter scores what its public pass is worth) and answers an empty submission with 0 points', () => {
    submit({ 'allreduce-mean.ts': readFileSync(join(REPO.exercises, EX01, 'src', 'allreduce-mean.ts'), 'utf8') });
    expect(runAutograder().status).toBe(0);
    expect(JSON.parse(readFileSync(results, 'utf8')).score).toBe(1);

    submit({ 'notes.txt': 'I could not finish' });
    expect(runAutograder().status).toBe(0);
    const empty = JSON.parse(readFileSync(results, 'utf8')) as { score: number; output: string };
    expect(empty.score).toBe(0);
    expect(empty.output).toMatch(/No source files found in your submission\. Upload src\/allreduce-mean\.ts/);
  });

  it('still writes a valid results.json when the grader cannot run at all', () => {
    submit({ 'src/allreduce-mean.ts': 'export {}' });
    cpSync(join(source, 'dtlab', 'grader', 'src', 'cli', 'autograde.ts'), join(tmp, 'autograde.ts.bak'));
    writeFileSync(join(source, 'dtlab', 'grader', 'src', 'cli', 'autograde.ts'), 'process.exit(7);\n');
    try {
      expect(runAutograder().status).toBe(0);
      const json = JSON.parse(readFileSync(results, 'utf8')) as { score: number; output: string };
      expect(json).toMatchObject({ score: 0, tests: [] });
      expect(json.output).toMatch(/could not grade this submission \(exit code 7\)/);
    } finally {
      cpSync(join(tmp, 'autograde.ts.bak'), join(source, 'dtlab', 'grader', 'src', 'cli', 'autograde.ts'));
    }
  });
});
