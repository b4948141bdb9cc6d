/**
 * Reading a submissions folder (students as folders or zips, exercises
 * wherever an archive put them) and writing the gradebook CSV safely.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { findExercise } from '../src/exercises.ts';
import { discoverStudents, locateExercise } from '../src/batch/discover.ts';
import { buildGradebook, csvField, gradebookCsv } from '../src/batch/gradebook.ts';
import { placeholderRubric } from '../src/batch/placeholder.ts';

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'dtlab-discover-'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

const ex01 = findExercise('ex01');
const mk = (...parts: string[]) => mkdirSync(join(root, ...parts), { recursive: true });

describe('discoverStudents', () => {
  it('takes each folder and each .zip as a student, sorted, and says what it left out', () => {
    mk('bob');
    mk('alice');
    writeFileSync(join(root, 'carol.zip'), '');
    writeFileSync(join(root, 'README.txt'), '');
    mk('.hidden');
    mk('summary.json');
    symlinkSync(join(root, 'bob'), join(root, 'linked'));
    const d = discoverStudents(root);
    expect(d.students.map((s) => `${s.id}:${s.kind}`)).toEqual(['alice:folder', 'bob:folder', 'carol:zip']);
    expect(d.problems.join('\n')).toMatch(/README\.txt: left out: not a folder or a \.zip/);
    expect(d.problems.join('\n')).toMatch(/summary\.json: left out: .*a name the batch uses/);
    expect(d.problems.join('\n')).toMatch(/linked: left out: .*symbolic links are not followed/);
  });

  it('grades the folder when a student has both a folder and a zip', () => {
    mk('dave');
    writeFileSync(join(root, 'dave.zip'), '');
    const d = discoverStudents(root);
    expect(d.students).toEqual([{ id: 'dave', kind: 'folder', path: join(root, 'dave') }]);
    expect(d.problems).toEqual(['dave: both a folder and a .zip: grading the folder, ignoring the zip']);
  });
});

describe('locateExercise', () => {
  it('finds the exercise by full or short name, a few folders down, preferring one with src/', () => {
    mk('a', 'ex01-allreduce-mean', 'src');
    expect(locateExercise(join(root, 'a'), ex01)).toBe(join(root, 'a', 'ex01-allreduce-mean'));
    mk('b', 'wrapper', 'EX01', 'src');
    expect(locateExercise(join(root, 'b'), ex01)).toBe(join(root, 'b', 'wrapper', 'EX01'));
    mk('c', 'x', 'ex01');
    mk('c', 'y', 'ex01', 'src');
    expect(locateExercise(join(root, 'c'), ex01)).toBe(join(root, 'c', 'y', 'ex01'));
  });

  it('is null when the exercise is not there, and takes a bare src/ only when one exercise is graded', () => {
    mk('d', 'ex02-ring-scatter-reduce', 'src');
    mk('d', 'node_modules', 'ex01', 'src');
    expect(locateExercise(join(root, 'd'), ex01)).toBeNull();
    mk('e', 'src');
    expect(locateExercise(join(root, 'e'), ex01)).toBeNull();
    expect(locateExercise(join(root, 'e'), ex01, true)).toBe(join(root, 'e'));
  });
});

describe('the gradebook CSV', () => {
  it('quotes commas and quotes, and never lets a spreadsheet read a cell as a formula', () => {
    expect(csvField('a,b')).toBe('"a,b"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField('=HYPERLINK("x")')).toBe(`"'=HYPERLINK(""x"")"`);
    expect(csvField(-3)).toBe('-3');
  });

  it('marks a student incomplete while an exercise is not graded, with an empty cell', () => {
    const r = placeholderRubric({ exercise: ex01, studentId: 'ann', path: 'ann', sha256: '1'.repeat(64), seed: 1, flag: 'missing', reason: 'test' });
    const g = buildGradebook([{ student: 'ann', exerciseId: 'ex01', file: 'x', rubric: r }], {
      schemaVersion: 1,
      graderVersion: 'v',
      shard: null,
      exercises: ['ex01-allreduce-mean', 'ex02-ring-scatter-reduce'],
      students: ['ann', 'ben'],
      problems: [],
    });
    expect(gradebookCsv(g)).toBe('student,ex01,ex02,total,max,status,flags\nann,0,,0,10,incomplete,ex01:missing\nben,,,0,10,incomplete,\n');
    expect(g.summary.pairs).toEqual({ expected: 4, graded: 1, pending: 3 });
  });

  it('does not count a rubric filed under another student', () => {
    const r = placeholderRubric({ exercise: ex01, studentId: 'mallory', path: 'x', sha256: '1'.repeat(64), seed: 1, flag: 'missing', reason: 'test' });
    const g = buildGradebook([{ student: 'ann', exerciseId: 'ex01', file: 'x', rubric: r }], null);
    expect(g.rows.find((row) => row.student === 'ann')!.rubrics.ex01).toBeNull();
    expect(g.summary.problems[0]).toMatch(/ann\/ex01\.json holds the rubric of mallory/);
  });
});
