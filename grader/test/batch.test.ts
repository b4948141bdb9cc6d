/**
 * Batch grading of a small class: folders and zips, exercises missing, a zip
 * that is refused; the gradebook, the summary and the per-student rubrics;
 * resuming (a rerun skips everything, --force regrades), and stopping: a
 * Ctrl-C stops cleanly and a kill -9 followed by a rerun gives the same
 * gradebook as an uninterrupted run.
 */
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { execa, type ResultPromise } from 'execa';
import { strToU8, zipSync } from 'fflate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findExercise } from '../src/exercises.ts';
import { EXERCISES_DIR, GRADER_DIR, SOLUTIONS_DIR, WORK_DIR } from '../src/paths.ts';
import { runBatch, type BatchResult } from '../src/batch/run.ts';
import { listRubrics, readRubricFile, rubricPath } from '../src/batch/layout.ts';
import { LineProgress } from '../src/batch/progress.ts';
import type { BatchEvent } from '../src/batch/events.ts';

const EX = ['ex01', 'ex02'].map((n) => findExercise(n));
const CLI = join(GRADER_DIR, 'src', 'cli', 'batch.ts');
const TSX = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
const TYPE_ERROR = join(import.meta.dirname, 'fixtures', 'corpus', 'type-error', 'ex01-allreduce-mean');

/** The files of `dir/src` as zip entries under `prefix`. */
function zipEntries(dir: string, prefix: string): Record<string, Uint8Array> {
  const out: Record<string, Uint8Array> = {};
  for (const f of readdirSync(join(dir, 'src'), { recursive: true, withFileTypes: true })) {
    if (f.isFile()) out[`${prefix}/${join(f.parentPath, f.name).slice(dir.length + 1)}`] = readFileSync(join(f.parentPath, f.name));
  }
  return out;
}

/**
 * alice/  ex01 and ex02 solved (folders)
 * bob.zip bob/ex01-allreduce-mean: the starter, wrapped in a folder; no ex02
 * carol/  ex01/ (short name): correct but with a type error; no ex02
 * dave.zip  an entry that climbs out of its folder: refused
 */
function makeClass(root: string): void {
  cpSync(join(SOLUTIONS_DIR, 'ex01-allreduce-mean', 'src'), join(root, 'alice', 'ex01-allreduce-mean', 'src'), { recursive: true });
  cpSync(join(SOLUTIONS_DIR, 'ex02-ring-scatter-reduce', 'src'), join(root, 'alice', 'ex02-ring-scatter-reduce', 'src'), { recursive: true });
  writeFileSync(join(root, 'bob.zip'), zipSync(zipEntries(join(EXERCISES_DIR, 'ex01-allreduce-mean'), 'bob/ex01-allreduce-mean')));
  cpSync(join(TYPE_ERROR, 'src'), join(root, 'carol', 'ex01', 'src'), { recursive: true });
  writeFileSync(join(root, 'dave.zip'), zipSync({ 'ex01-allreduce-mean/src/allreduce-mean.ts': strToU8('export {};\n'), '../../escaped.ts': strToU8('export {};\n') }));
}

const gradebook = (out: string) => readFileSync(join(out, 'gradebook.csv'), 'utf8');
const temporaries = (out: string) => readdirSync(out, { recursive: true }).map(String).filter((f) => /\.tmp-\d+-\d+$/.test(f));

/** Starts `pnpm grade:batch` as a process of its own (node with tsx's loader, no wrapper process). */
function startCli(subs: string, out: string): ResultPromise<{ reject: false; all: true }> {
  return execa(process.execPath, ['--import', TSX, CLI, subs, '--out', out, '--exercises', 'ex01,ex02', '--jobs', '2', '--seed', '1', '--plain'], { reject: false, all: true, env: { ...process.env, CI: '1' } });
}

async function waitFor(cond: () => boolean, ms = 90_000): Promise<void> {
  const t0 = Date.now();
  while (!cond()) {
    if (Date.now() - t0 > ms) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('grading a class', () => {
  let subs: string;
  let out: string;
  let first: BatchResult;
  const lines: string[] = [];

  beforeAll(async () => {
    subs = mkdtempSync(join(tmpdir(), 'dtlab-class-'));
    out = mkdtempSync(join(tmpdir(), 'dtlab-class-out-'));
    makeClass(subs);
    const view = new LineProgress((l) => lines.push(l));
    first = await runBatch({ submissions: subs, out, exercises: EX, jobs: 2, seed: 1, gradescope: true, onEvent: (e) => view.onEvent(e) });
    view.stop();
  }, 170_000);
  afterAll(() => {
    rmSync(subs, { recursive: true, force: true });
    rmSync(out, { recursive: true, force: true });
  });

  it('grades every student and exercise, missing ones included, and writes a valid rubric for each', () => {
    expect(first.pairs).toBe(8);
    expect(first.graded).toBe(8);
    const found = listRubrics(out);
    expect(found.map((f) => `${f.student}/${f.exerciseId}`)).toEqual(['alice/ex01', 'alice/ex02', 'bob/ex01', 'bob/ex02', 'carol/ex01', 'carol/ex02', 'dave/ex01', 'dave/ex02']);
    expect(found.every((f) => f.rubric !== null)).toBe(true);
    expect(existsSync(join(subs, '..', 'escaped.ts'))).toBe(false);
  });

  it('writes the gradebook: a score per exercise, the total, the status and the flags', () => {
    const m1 = findExercise('ex01').manifest.totalPoints!;
    const m2 = findExercise('ex02').manifest.totalPoints!;
    const max = String(m1 + m2);
    const rows = gradebook(out).trim().split('\n').map((l) => l.split(','));
    expect(rows[0]).toEqual(['student', 'ex01', 'ex02', 'total', 'max', 'status', 'flags']);
    const [, alice, bob, carol, dave] = rows;
    expect(alice).toEqual(['alice', String(m1), String(m2), max, max, 'complete', '']);
    expect(bob![0]).toBe('bob');
    expect(Number(bob![1])).toBeLessThan(m1); // the starter fails a check
    expect(bob!.slice(2)).toEqual(['0', bob![1], max, 'complete', 'ex02:missing']);
    expect(carol).toEqual(['carol', String(m1), '0', String(m1), max, 'complete', 'ex01:type-errors ex02:missing']);
    expect(dave).toEqual(['dave', '0', '0', '0', max, 'complete', 'ex01:unreadable ex02:unreadable']);
  });

  it('records where each submission came from and why a zip was refused', () => {
    expect(readRubricFile(rubricPath(out, 'bob', 'ex01'))!.submission.path).toBe('bob.zip:bob/ex01-allreduce-mean');
    expect(readRubricFile(rubricPath(out, 'carol', 'ex01'))!.submission.path).toBe('carol/ex01');
    expect(readRubricFile(rubricPath(out, 'dave', 'ex01'))!.notes![0]).toMatch(/the zip was refused: dave\.zip has an entry that would be written outside its folder/);
  });

  it('writes the summary: counts, distributions, slowest and failing', () => {
    const s = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8'));
    expect(s.pairs).toEqual({ expected: 8, graded: 8, pending: 0 });
    // Missing and refused submissions are counted as such, not as graded and failed, at the top and per exercise.
    expect(s.status).toEqual({ passed: 3, failed: 1, error: 0, missing: 2, unreadable: 2 });
    expect(s.exercises.ex01.distribution).toEqual(expect.arrayContaining([{ score: 10, count: 2 }]));
    const m2 = findExercise('ex02').manifest.totalPoints!;
    expect(s.exercises.ex02).toMatchObject({ graded: 1, passed: 1, failed: 0, missing: 2, unreadable: 1, maxScore: m2, mean: m2 });
    expect(s.slowest.length).toBe(4);
    expect(s.failing.map((f: { student: string; exercise: string }) => `${f.student}/${f.exercise}`).sort()).toEqual(['bob/ex01', 'dave/ex01', 'dave/ex02']);
  });

  it('writes Gradescope results beside each rubric when asked', () => {
    const gs = JSON.parse(readFileSync(join(out, 'alice', 'ex01.gradescope.json'), 'utf8'));
    expect(gs.score).toBe(10);
    expect(gs.tests.length).toBe(6);
  });

  it('logs one plain line per pair when not on a terminal', () => {
    expect(lines[0]).toMatch(/^grading 4 students x 2 exercises \(ex01, ex02; shard all\): 8 pairs, 0 already graded, 8 to grade with 2 jobs$/);
    expect(lines.filter((l) => /^\[\d\/8\] /.test(l)).length).toBe(8);
    expect(lines).toContain('[8/8] ' + lines.find((l) => l.startsWith('[8/8] '))!.slice(6));
    expect(lines.some((l) => /carol ex01 passed 10\/10 .*\[type-errors\]/.test(l))).toBe(true);
  });

  it('skips everything on a rerun, and leaves the gradebook as it was', async () => {
    const before = gradebook(out);
    const again = await runBatch({ submissions: subs, out, exercises: EX, jobs: 2, seed: 1 });
    expect(again.skipped).toBe(8);
    expect(again.graded).toBe(0);
    expect(gradebook(out)).toBe(before);
  });

  it('regrades with --force, and regrades a pair whose submission changed', async () => {
    const before = gradebook(out);
    const forced = await runBatch({ submissions: subs, out, exercises: [EX[0]!], jobs: 2, seed: 1, force: true });
    expect(forced.graded).toBe(4);
    expect(gradebook(out)).toBe(before);
    writeFileSync(join(subs, 'carol', 'ex01', 'src', 'extra.ts'), 'export const extra = 1;\n');
    const changed = await runBatch({ submissions: subs, out, exercises: EX, jobs: 2, seed: 1 });
    expect(changed.graded).toBe(1);
    expect(changed.skipped).toBe(7);
    rmSync(join(subs, 'carol', 'ex01', 'src', 'extra.ts'));
  });

  it('after kill -9 mid-batch, a rerun loses nothing and counts nothing twice', async () => {
    const out2 = mkdtempSync(join(tmpdir(), 'dtlab-killed-'));
    try {
      const child = startCli(subs, out2);
      await waitFor(() => listRubrics(out2).length >= 1);
      child.kill('SIGKILL');
      await child;
      // What the killed batch left: its unpack folder (and any private copies it was grading).
      const ownedByKilled = () => [...readdirSync(WORK_DIR), ...readdirSync(tmpdir())].filter((n) => n.includes(`-${child.pid}-`));
      expect(ownedByKilled().filter((n) => n.startsWith('dtlab-batch-'))).toHaveLength(1);
      const found = listRubrics(out2).map((f) => `${f.student}/${f.exerciseId} ${f.rubric?.grader.version} ${f.rubric?.status} ${f.rubric?.submission.sha256}`);
      const partial = found.length;
      expect(partial).toBeLessThan(8);
      const regraded: string[] = [];
      const rerun = await runBatch({ submissions: subs, out: out2, exercises: EX, jobs: 2, seed: 1, onEvent: (e) => void (e.type === 'graded' && regraded.push(`${e.pair.student}/${e.pair.exercise} ${e.rubric.grader.version} ${e.rubric.status} ${e.rubric.submission.sha256}`)) });
      expect(rerun.skipped + rerun.graded).toBe(8);
      // Every rubric the killed batch finished is kept: the rerun grades only the others.
      expect(rerun.skipped, `kept:\n${found.join('\n')}\nregraded:\n${regraded.join('\n')}`).toBe(partial);
      expect(gradebook(out2)).toBe(gradebook(out));
      expect(temporaries(out2)).toEqual([]);
      expect(ownedByKilled(), 'leftovers of the killed batch, removed by the rerun').toEqual([]);
    } finally {
      rmSync(out2, { recursive: true, force: true });
    }
  });

  it('stops cleanly on Ctrl-C: running gradings killed, finished ones kept, a consistent gradebook, how to resume', async () => {
    const out3 = mkdtempSync(join(tmpdir(), 'dtlab-sigint-'));
    try {
      const child = startCli(subs, out3);
      await waitFor(() => listRubrics(out3).length >= 1);
      child.kill('SIGINT');
      const r = await child;
      expect(r.exitCode).toBe(130);
      expect(r.all).toMatch(/stopping: SIGINT: killing the running gradings/);
      const done = listRubrics(out3);
      expect(done.every((f) => f.rubric !== null)).toBe(true);
      expect(r.all).toMatch(new RegExp(`stopped by SIGINT: ${done.length} of 8 pairs are graded and in the gradebook; ${8 - done.length} left\\. Rerun the same command`));
      const summary = JSON.parse(readFileSync(join(out3, 'summary.json'), 'utf8'));
      expect(summary.pairs.graded).toBe(done.length);
      expect(temporaries(out3)).toEqual([]);
    } finally {
      rmSync(out3, { recursive: true, force: true });
    }
  });
});

describe('batch events', () => {
  it('reports a plan before grading, then one event per pair', async () => {
    const subs = mkdtempSync(join(tmpdir(), 'dtlab-events-'));
    const out = mkdtempSync(join(tmpdir(), 'dtlab-events-out-'));
    try {
      mkdirSync(join(subs, 'erin'));
      const events: BatchEvent[] = [];
      await runBatch({ submissions: subs, out, exercises: EX, jobs: 1, seed: 1, onEvent: (e) => events.push(e) });
      expect(events.map((e) => e.type)).toEqual(['planned', 'graded', 'graded']);
      expect(events[0]).toMatchObject({ students: 1, total: 2, done: 0, toGrade: 2, jobs: 1, shard: 'all' });
    } finally {
      rmSync(subs, { recursive: true, force: true });
      rmSync(out, { recursive: true, force: true });
    }
  });
});
