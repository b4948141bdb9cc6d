/**
 * The Moodle export against what Moodle's CSV grade import does with a file
 * (grade/import/csv/classes/load_data.php, prepare_import_grade_data and
 * update_grade_item): a line of one field is skipped; the mapped identifier
 * column names the user, and a line whose identifier is empty keeps the user
 * of the line before; a grade cell that is empty or '-' clears the grade;
 * any other must be a decimal number. `importLikeMoodle` below follows those
 * rules, and the export must come through it giving each student exactly
 * their grades. The roster is a Moodle grade export ("Plain text file":
 * names, ID number, institution, department, email address, the grade items,
 * the time it was exported).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collectGrades } from '../src/export/grades.ts';
import { moodleExport } from '../src/export/moodle.ts';
import { parseRoster, RosterError } from '../src/export/roster.ts';
import { quizOf, resultsFolder, rubricOf } from './export-fixtures.ts';

const FIXTURE = join(import.meta.dirname, 'fixtures', 'exports', 'moodle-export.csv');
const roster = (text?: string) => parseRoster(text === undefined ? readFileSync(FIXTURE) : new TextEncoder().encode(text), 'moodle.csv');

/** What Moodle's importer would record: user -> item -> grade (null: cleared), by its rules above. */
function importLikeMoodle(text: string): Map<string, Map<string, number | null>> {
  const [header, ...lines] = parse(text, { relax_column_count: true }) as string[][];
  const out = new Map<string, Map<string, number | null>>();
  let user: string | null = null;
  for (const line of lines) {
    if (line.length <= 1) continue;
    const id = line[0]!.trim();
    if (id !== '') user = id; // an empty identifier leaves the previous line's user in place
    if (user === null) throw new Error('Moodle: user not found, the whole import stops');
    const grades = out.get(user) ?? out.set(user, new Map()).get(user)!;
    line.slice(1).forEach((raw, i) => {
      const v = raw.trim();
      if (v !== '' && v !== '-' && !/^-?\d+(\.\d+)?$/.test(v)) throw new Error(`Moodle: bad grade '${v}', the whole import stops`);
      grades.set(header![i + 1]!, v === '' || v === '-' ? null : Number(v));
    });
  }
  return out;
}

let results: ReturnType<typeof resultsFolder>;
beforeAll(() => {
  results = resultsFolder(
    [
      rubricOf('ex01', 'alice@uni.example', { 'edge-shapes': 'failed' }),
      rubricOf('ex01', 'bob@uni.example'),
      rubricOf('ex02', 'bob@uni.example', { 'world-sizes': 'error' }),
      rubricOf('ex01', 'zed@uni.example'),
    ],
    [quizOf('alice@uni.example', 1, 7)],
  );
});
afterAll(() => results.dispose());

describe('the Moodle grade import', () => {
  it('writes the identifier column and a column per grade item, one row per student with a submission, in roster order', () => {
    const { records, report } = moodleExport(roster(), collectGrades(results.dir));
    expect(records).toEqual([
      ['Email address', 'ex01 All-reduce mean', 'ex02 Ring scatter-reduce', 'quiz1 Knowledge check: Data parallelism'],
      ['alice@uni.example', '8', '', '7'],
      ['bob@uni.example', '10', '', ''],
    ]);
    expect(report.noSubmission).toEqual([
      { line: 4, id: 'carol@uni.example' },
      { line: 5, id: '' },
    ]);
    expect(report.notInRoster).toEqual(['zed@uni.example']);
    expect(report.blanks.map((b) => [b.id, b.column])).toEqual([
      ['alice@uni.example', 'ex02'],
      ['bob@uni.example', 'ex02'],
      ['bob@uni.example', 'quiz1'],
    ]);
  });

  it("comes through Moodle's import rules giving each student their grades, and nobody else any", () => {
    const { text } = moodleExport(roster(), collectGrades(results.dir));
    const imported = importLikeMoodle(text);
    expect([...imported.keys()]).toEqual(['alice@uni.example', 'bob@uni.example']);
    expect(imported.get('alice@uni.example')!.get('ex01 All-reduce mean')).toBe(8);
    expect(imported.get('alice@uni.example')!.get('quiz1 Knowledge check: Data parallelism')).toBe(7);
    expect(imported.get('bob@uni.example')!.get('ex01 All-reduce mean')).toBe(10);
    // No line without an identifier (Moodle would give its grades to the line before), no byte order mark.
    expect(text.split('\n').slice(1).filter(Boolean).every((l) => !l.startsWith(','))).toBe(true);
    expect(text.startsWith('\ufeff')).toBe(false);
  });

  it('matches by the column --match names, or by the first identifier column the roster has', () => {
    const byNumber = resultsFolder([rubricOf('ex01', 'S1003')]);
    try {
      const { records } = moodleExport(roster(), collectGrades(byNumber.dir), { match: 'ID number' });
      expect(records).toEqual([['ID number', 'ex01 All-reduce mean'], ['S1003', '10']]);
      const withUsername = 'Username,Email address,Lab\ncarol,c@x,1\n';
      expect(() => moodleExport(roster(withUsername), collectGrades(byNumber.dir))).not.toThrow();
      expect(moodleExport(roster(withUsername), collectGrades(byNumber.dir)).records[0]![0]).toBe('Username');
    } finally {
      byNumber.dispose();
    }
  });

  it('refuses a roster with no identifier column, or one that lists a student twice', () => {
    expect(() => moodleExport(roster('First name,Last name\nA,B\n'), collectGrades(results.dir))).toThrow(/line 1: there is none .*expected an identifier column: one of 'Username', 'Email address'/);
    const twice = 'Email address,Lab\nalice@uni.example,1\nbob@uni.example,2\nalice@uni.example,3\n';
    const e = (() => {
      try {
        moodleExport(roster(twice), collectGrades(results.dir));
      } catch (x) {
        return x as RosterError;
      }
    })();
    expect(e).toBeInstanceOf(RosterError);
    expect([e!.line, e!.found]).toEqual([4, "'alice@uni.example' is also on line 2"]);
  });
});
