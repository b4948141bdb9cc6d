/**
 * The Canvas export against the layout of Canvas's own gradebook export
 * (test/fixtures/exports/canvas-gradebook.csv: the five identity columns, an
 * assignment per column named `Name (id)`, read-only totals, the "Points
 * Possible" row, a posting-policy row, a test student; UTF-8 with a byte
 * order mark, CRLF): the same file comes back, every cell where it was, with
 * the grades filled in and the new columns at the end, ready for Canvas's
 * gradebook import.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canvasExport } from '../src/export/canvas.ts';
import { collectGrades } from '../src/export/grades.ts';
import { parseRoster, RosterError, type Roster } from '../src/export/roster.ts';
import { missingRubric, quizOf, resultsFolder, rubricOf } from './export-fixtures.ts';

const FIXTURE = join(import.meta.dirname, 'fixtures', 'exports', 'canvas-gradebook.csv');
const fixture = () => readFileSync(FIXTURE);
const roster = (text: string | Buffer = fixture()): Roster => parseRoster(typeof text === 'string' ? new TextEncoder().encode(text) : text, 'canvas.csv');

let results: ReturnType<typeof resultsFolder>;
beforeAll(() => {
  results = resultsFolder(
    [
      rubricOf('ex01', 'alice', { 'three-ranks': { status: 'failed', message: 'rank 1, mean: 3 of 12 elements are wrong', divergence: { rank: 1, index: 4, expected: 0.5, actual: 0.25 } } }),
      rubricOf('ex02', 'alice', { 'world-sizes': { status: 'error', message: 'BUG: the check threw' } }),
      missingRubric('ex01', 'bob'),
      rubricOf('ex02', 'bob'),
      rubricOf('ex01', 'Carol'),
      rubricOf('ex01', 'dave'),
    ],
    [quizOf('alice', 1, 9), quizOf('bob', 1, null)],
  );
});
afterAll(() => results.dispose());

describe('the Canvas gradebook import', () => {
  it('fills the roster: grades in the exercise columns, new columns at the end with their points, every other cell as it was', () => {
    const grades = collectGrades(results.dir);
    const { records, report } = canvasExport(roster(), grades);
    const original = roster();
    expect(records[0]).toEqual([...original.header, 'ex01 All-reduce mean', 'quiz1 Knowledge check: Data parallelism']);
    const row = (first: string) => records.find((r) => r[0] === first)!;
    // Points Possible: the new columns get their maximum; the existing ex02 column keeps Canvas's 15.00.
    expect(row('    Points Possible')).toEqual(['    Points Possible', '', '', '', '', '5.00', '15.00', '(read only)', '(read only)', '(read only)', '(read only)', '10', '10']);
    expect(row('')).toEqual(['', '', '', '', '', '', 'Manual Posting', '', '', '', '', '', '']);
    // alice: ex01 8 of 10, ex02 left blank (grading error), quiz 9; her other cells untouched.
    expect(row('Doe, Alice')).toEqual(['Doe, Alice', '1001', 'S1001', 'alice', 'CS 336 - 01 and CS 336 - 02', '4.00', '', '80.00', '80.00', '80.00', '80.00', '8', '9']);
    // bob: no ex01 folder scores 0 (as in the gradebook); ex02 15 (its maximum) replaces Canvas's 11.00; no quiz attempt 0.
    expect(row('Lee, Bob')).toEqual(['Lee, Bob', '1002', 'S1002', 'bob', 'CS 336 - 01', '5.00', '15', '100.00', '100.00', '100.00', '100.00', '0', '0']);
    // carol and the test student: no submission, empty cells.
    expect(row('Ng, Carol').slice(5)).toEqual(['', '', '', '', '', '', '', '']);
    expect(row('Student, Test').slice(5)).toEqual(['', '', '', '', '', '', '', '']);
    expect(report).toMatchObject({
      students: 4,
      filled: 2,
      noSubmission: [
        { line: 6, id: 'carol' },
        { line: 7, id: '' },
      ],
      notInRoster: ['Carol', 'dave'],
      added: ['ex01 All-reduce mean', 'quiz1 Knowledge check: Data parallelism'],
      filledColumns: ['ex02 Ring scatter-reduce (4712)'],
    });
    expect(report.blanks).toEqual([{ line: 4, id: 'alice', column: 'ex02', reason: expect.stringMatching(/grading itself failed/) }]);
    expect(report.warnings).toContainEqual(expect.stringMatching(/'Carol' was graded and the roster has 'carol': ids must match exactly/));
  });

  it('writes the file as Canvas wrote it: byte order mark, CRLF, the same rows in the same order', () => {
    const { text } = canvasExport(roster(), collectGrades(results.dir));
    expect(text.startsWith('\ufeffStudent,ID,SIS User ID,SIS Login ID,Section,')).toBe(true);
    expect(text.split('\r\n').length - 1).toBe(7);
    expect(text).not.toMatch(/[^\r]\n/);
    const back = parseRoster(new TextEncoder().encode(text), 'upload.csv');
    expect(back.rows.map((r) => r.line)).toEqual(roster().rows.map((r) => r.line));
    expect(back.rows.map((r) => r.cells.slice(0, 5))).toEqual(roster().rows.map((r) => r.cells.slice(0, 5)));
  });

  it('gives the same file when its own output is the roster (the added columns are then filled, not added again)', () => {
    const grades = collectGrades(results.dir);
    const first = canvasExport(roster(), grades);
    const second = canvasExport(roster(first.text), grades);
    expect(second.text).toBe(first.text);
    expect(second.report.added).toEqual([]);
    expect(second.report.filledColumns).toEqual(['ex01 All-reduce mean', 'ex02 Ring scatter-reduce (4712)', 'quiz1 Knowledge check: Data parallelism']);
  });

  it('matches by another column when asked (--match), and exports only the exercises asked for', () => {
    const renamed = resultsFolder([rubricOf('ex01', 'S1002')]);
    try {
      const { records, report } = canvasExport(roster(), collectGrades(renamed.dir, ['ex01']), { match: 'SIS User ID' });
      expect(records[0]!.slice(11)).toEqual(['ex01 All-reduce mean']);
      expect(records.find((r) => r[0] === 'Lee, Bob')!.slice(11)).toEqual(['10']);
      expect(report.filled).toBe(1);
    } finally {
      renamed.dispose();
    }
  });

  it('warns when an existing column is worth other points in Canvas than the exercise', () => {
    const text = fixture().toString('utf8').replace('5.00,15.00', '5.00,100.00');
    const { report } = canvasExport(roster(text), collectGrades(results.dir));
    expect(report.warnings).toContainEqual("'ex02 Ring scatter-reduce (4712)' is worth 100.00 points in Canvas but ex02 is out of 15: Canvas records the score as given, out of its own points");
  });
});

describe('bad Canvas rosters', () => {
  const refusal = (text: string, match?: string): RosterError => {
    try {
      canvasExport(roster(text), collectGrades(results.dir), match ? { match } : {});
    } catch (e) {
      if (e instanceof RosterError) return e;
      throw e;
    }
    throw new Error('accepted');
  };
  const HEAD = 'Student,ID,SIS User ID,SIS Login ID,Section,x (1)\n';

  it('names the line of a student listed twice, and the line it first appeared on', () => {
    const e = refusal(`${HEAD}A,1,S1,alice,s,\nB,2,S2,bob,s,\nA2,3,S3,alice,s,\n`);
    expect(e.message).toBe("canvas.csv, line 4: 'alice' is also on line 2; expected each 'SIS Login ID' once. Remove the duplicate row, or match by a column that tells the two apart (--match)");
  });

  it("names Canvas's columns that are missing, and a --match column that is not there", () => {
    expect(refusal('Name,ID,Section\nA,1,s\n').message).toMatch(/line 1: 'Student', 'SIS User ID', 'SIS Login ID' are missing/);
    expect(refusal(`${HEAD}A,1,S1,alice,s,\n`, 'Email').message).toMatch(/line 1: there is none .*expected a column 'Email' to match students by \(--match\)/);
  });

  it('refuses two columns that both look like one exercise', () => {
    expect(refusal('Student,ID,SIS User ID,SIS Login ID,Section,ex01 old (1),EX01 new (2)\nA,1,S1,alice,s,,\n').message).toMatch(/'ex01 old \(1\)' and 'EX01 new \(2\)' all start with ex01; expected one column for ex01/);
  });
});
