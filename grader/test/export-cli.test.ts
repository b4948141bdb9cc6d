/**
 * `pnpm grade:export`, as a TA runs it: the file written atomically and a
 * report of what to look at, a bad roster refused with its line (exit 2,
 * nothing written), and usage errors that say what to give.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../src/paths.ts';
import { missingRubric, resultsFolder, rubricOf } from './export-fixtures.ts';

const CLI = join(ROOT, 'grader', 'src', 'cli', 'export.ts');
const BATCH = join(ROOT, 'grader', 'src', 'cli', 'batch.ts');
const CANVAS = join(import.meta.dirname, 'fixtures', 'exports', 'canvas-gradebook.csv');
const tmp = mkdtempSync(join(tmpdir(), 'dtlab-export-cli-'));
let results: ReturnType<typeof resultsFolder>;
beforeAll(() => {
  results = resultsFolder([rubricOf('ex01', 'alice', { 'three-ranks': 'failed' }), missingRubric('ex01', 'bob'), rubricOf('ex01', 'zoe\u001b[2J')]);
});
afterAll(() => {
  results.dispose();
  rmSync(tmp, { recursive: true, force: true });
});

// tsx from the grader's dependencies: the command runs in a temporary folder, where `--import tsx` would not resolve.
const TSX = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
const run = (...args: string[]) => runCli(CLI, args);
const runCli = (cli: string, args: string[]) => {
  const r = spawnSync(process.execPath, ['--import', TSX, cli, ...args], { cwd: tmp, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
};

describe('pnpm grade:export', () => {
  it('writes the Canvas upload and says who has no submission and which graded folders the roster lacks, printably', () => {
    const r = run(results.dir, '--canvas', CANVAS, '--out', 'upload.csv');
    expect(r.status, r.stderr).toBe(0);
    expect(readFileSync(join(tmp, 'upload.csv'), 'utf8')).toMatch(/^\ufeffStudent,ID,SIS User ID,SIS Login ID,Section,.*,ex01 All-reduce mean\r\n/);
    expect(r.stdout).toMatch(/wrote upload.csv: 2 of 4 students with grades/);
    expect(r.stdout).toMatch(/no submission graded \(their cells are empty\): carol \(line 6\), \(no id\) \(line 7\)/);
    expect(r.stdout).toContain('graded but not in the roster, left out: zoe\\u{1b}[2J');
    expect(r.stdout).not.toContain('\u001b');
  });

  it('writes the JUnit report of a results folder', () => {
    const r = run(results.dir, '--junit', '--out', 'junit.xml');
    expect(r.status, r.stderr).toBe(0);
    expect(readFileSync(join(tmp, 'junit.xml'), 'utf8')).toMatch(/^<\?xml version="1.0" encoding="UTF-8"\?>\n<testsuites name="dtlab batch [^"]+" tests="\d+"/);
  });

  it('refuses a bad roster with its line and what was expected, exits 2 and writes nothing', () => {
    writeFileSync(join(tmp, 'semicolons.csv'), 'Student;ID;SIS User ID;SIS Login ID;Section\nA;1;S1;alice;s\n');
    const r = run(results.dir, '--moodle', 'semicolons.csv', '--out', 'grades.csv');
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/semicolons\.csv, line 1: the fields are separated by ';'.*expected fields separated by ','/);
    expect(existsSync(join(tmp, 'grades.csv'))).toBe(false);
  });

  it('says what to give when the command is incomplete', () => {
    expect(run(results.dir, '--out', 'x.csv').stderr).toMatch(/choose one of --canvas ROSTER.csv, --moodle ROSTER.csv or --junit/);
    expect(run(results.dir, '--canvas', CANVAS, '--moodle', CANVAS, '--out', 'x.csv').stderr).toMatch(/\(got --canvas and --moodle\)/);
    expect(run(results.dir, '--canvas', CANVAS).stderr).toMatch(/--out FILE is required/);
    expect(run(join(tmp, 'nowhere'), '--canvas', CANVAS, '--out', 'x.csv').stderr).toMatch(/no such folder/);
  });

  it('grade:batch --junit writes the JUnit report of the batch beside its gradebook', () => {
    // A student whose work holds no exercise folder: the pair is recorded as missing, nothing is run.
    mkdirSync(join(tmp, 'subs', 'ann'), { recursive: true });
    writeFileSync(join(tmp, 'subs', 'ann', 'notes.txt'), 'nothing yet');
    const r = runCli(BATCH, [join(tmp, 'subs'), '--out', join(tmp, 'batch-out'), '--exercises', 'ex01', '--junit', '--plain', '--no-typecheck']);
    expect(r.status, `${r.stdout}${r.stderr}`).toBe(0);
    expect(r.stdout).toMatch(/JUnit report: .*junit\.xml/);
    const xml = readFileSync(join(tmp, 'batch-out', 'junit.xml'), 'utf8');
    expect(xml).toContain('<testsuite name="ann/ex01-allreduce-mean"');
    expect(xml).toMatch(/<testcase name="two-ranks: Mean of two ranks' tensors" classname="ann\.ex01-allreduce-mean\.public" time="0\.000">\n\s*<skipped message="not run: /);
  });
});
