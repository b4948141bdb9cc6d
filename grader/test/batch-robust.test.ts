/**
 * What one student's submission can do to a batch by its names and sizes
 * alone: nothing to the others. A zip whose name the file system gives back
 * differently cannot stop the planning of the class, and fingerprints tell
 * apart trees that differ only in where one file ends.
 */
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { findExercise } from '../src/exercises.ts';
import { SOLUTIONS_DIR } from '../src/paths.ts';
import { hashTree } from '../src/submission.ts';
import { runBatch } from '../src/batch/run.ts';
import { csvField } from '../src/batch/gradebook.ts';
import { printable } from '../src/report.ts';

const dirs: string[] = [];
const temp = (prefix: string) => {
  const d = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('fingerprints', () => {
  it('differ for two trees whose bytes, names and contents run together, would read the same', () => {
    const a = temp('dtlab-hash-a-');
    const b = temp('dtlab-hash-b-');
    writeFileSync(join(a, 'a.ts'), 'x\n/*\0zz.ts\0*/\n');
    writeFileSync(join(b, 'a.ts'), 'x\n/*');
    writeFileSync(join(b, 'zz.ts'), '*/\n');
    expect(hashTree(a)).not.toBe(hashTree(b));
  });
});

describe('names from submissions in what a TA reads', () => {
  it('a gradebook cell is never a formula and never splits a row, in any locale', () => {
    expect(csvField(' =1+1')).toBe("' =1+1");
    expect(csvField('@SUM(A1)')).toBe("'@SUM(A1)");
    expect(csvField('x;=1+1')).toBe('"x;=1+1"');
    // A line separator (or any control character) in a name is shown as an escape, so it splits nothing.
    expect(csvField('a\u2028b')).toBe('a\\u{2028}b');
    expect(csvField('eve\u001b[2Kmallory')).toBe('eve\\u{1b}[2Kmallory');
    expect(csvField('a"b,c')).toBe('"a""b,c"');
    expect(csvField('alice')).toBe('alice');
  });

  it('a note printed to the terminal shows control characters instead of obeying them', () => {
    const shown = printable('x\u001b]0;PWNED\u0007\u001b[2K\r[9 of 9] carol passed');
    expect(shown).toBe('x\\u{1b}]0;PWNED\\u{7}\\u{1b}[2K\\u{d}[9 of 9] carol passed');
    expect(shown).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/);
  });
});

describe('a zip or folder whose name is not valid UTF-8', () => {
  it('is recorded as unreadable, saying why, and the rest of the class is graded', async () => {
    const subs = temp('dtlab-badname-');
    const out = temp('dtlab-badname-out-');
    cpSync(join(SOLUTIONS_DIR, 'ex01-allreduce-mean', 'src'), join(subs, 'alice', 'ex01-allreduce-mean', 'src'), { recursive: true });
    // bad\xff.zip: Node lists it as bad\uFFFD.zip, a name that does not exist.
    writeFileSync(Buffer.concat([Buffer.from(join(subs, 'bad')), Buffer.from([0xff]), Buffer.from('.zip')]), 'not a zip');
    // inv\xfe/: a folder with a real submission, listed as inv\uFFFD, which does not exist either.
    const inv = (rel: string) => Buffer.concat([Buffer.from(join(subs, 'inv')), Buffer.from([0xfe]), Buffer.from(rel)]);
    mkdirSync(inv('/ex01/src'), { recursive: true });
    writeFileSync(inv('/ex01/src/allreduce-mean.ts'), readFileSync(join(SOLUTIONS_DIR, 'ex01-allreduce-mean', 'src', 'allreduce-mean.ts')));
    mkdirSync(out, { recursive: true });
    const r = await runBatch({ submissions: subs, out, exercises: [findExercise('ex01')], jobs: 1, seed: 1, typeCheck: false });
    expect(r.interrupted).toBe(false);
    const csv = readFileSync(join(out, 'gradebook.csv'), 'utf8');
    expect(csv).toMatch(/^alice,10,10,10,complete,$/m);
    expect(csv).toMatch(/^bad\uFFFD,0,0,10,complete,ex01:unreadable$/m);
    expect(csv).toMatch(/^inv\uFFFD,0,0,10,complete,ex01:unreadable$/m);
    expect(readFileSync(join(out, 'inv\uFFFD', 'ex01.json'), 'utf8')).toMatch(/rename it/);
    expect(readFileSync(join(out, 'bad\uFFFD', 'ex01.json'), 'utf8')).toMatch(/cannot be opened under the name the folder listing gives \(is its name valid UTF-8\?\): rename it/);
  }, 60_000);
});

describe('the Gradescope file beside a rubric', () => {
  it('always says what the rubric says: removed when a rerun without --gradescope regrades, written for skipped pairs with it', async () => {
    const subs = temp('dtlab-gs-');
    const out = temp('dtlab-gs-out-');
    const src = join(subs, 'alice', 'ex01-allreduce-mean', 'src');
    cpSync(join(SOLUTIONS_DIR, 'ex01-allreduce-mean', 'src'), src, { recursive: true });
    const gs = join(out, 'alice', 'ex01.gradescope.json');
    const run = (gradescope: boolean) => runBatch({ submissions: subs, out, exercises: [findExercise('ex01')], jobs: 1, seed: 1, typeCheck: false, gradescope });
    await run(true);
    expect(JSON.parse(readFileSync(gs, 'utf8')).score).toBe(10);
    writeFileSync(join(src, 'allreduce-mean.ts'), 'export async function allReduceMean(): Promise<void> {}\n');
    await run(false); // regrades the changed submission: the old Gradescope file would say 10
    expect(existsSync(gs)).toBe(false);
    const again = await run(true); // nothing to regrade, but the file comes back, from the rubric
    expect(again.graded).toBe(0);
    expect(JSON.parse(readFileSync(gs, 'utf8')).score).toBe(0);
  }, 90_000);
});
