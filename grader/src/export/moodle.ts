/**
 * Moodle: the CSV that Moodle's grade import (Grades, Import, CSV file)
 * takes: an identifier column, then one column per grade item. On import the
 * TA maps the identifier column to the user field it holds (username, email
 * address, ID number or user id) and each grade column to a grade item, or to
 * "new grade item", which takes the column's name.
 *
 * The roster is the TA's export of the course (Grades, Export, Plain text),
 * or any CSV with the identifier column: it says who is in the course, so
 * that no grade goes to a user Moodle does not have (Moodle stops the whole
 * import at such a row). Moodle's importer reads an empty cell as "no grade"
 * and clears the grade there, and gives the grades of a row with an empty
 * identifier to the row before it; so the file holds one row per roster
 * student with a submission graded, in roster order, and none for a student
 * without one (they are reported), nor for a row without an identifier.
 */
import { assertCsvRoundTrip, columnIndex, csvText, RosterError, type Roster } from './roster.ts';
import { matchStudents } from './match.ts';
import { scoreText, type ClassGrades } from './grades.ts';
import { newReport } from './report.ts';
import type { GradeExport } from './canvas.ts';

/** Identifier columns a Moodle export or a TA's list may have, tried in this order when --match is not given. */
export const MOODLE_ID_COLUMNS = Object.freeze(['Username', 'Email address', 'ID number', 'Email', 'User ID']);

/** The identifier column of `roster`: `match`, or the first of MOODLE_ID_COLUMNS it has (case aside). */
export function moodleMatchColumn(roster: Roster, match?: string): string {
  if (match !== undefined) return match;
  for (const want of MOODLE_ID_COLUMNS) {
    const found = roster.header.find((h) => h.trim().toLowerCase() === want.toLowerCase());
    if (found) return found;
  }
  throw new RosterError(roster.file, 1, `an identifier column: one of ${MOODLE_ID_COLUMNS.map((c) => `'${c}'`).join(', ')}, or the one --match names`, `there is none (the header has ${roster.header.map((h) => `'${h}'`).join(', ')})`, "Pass --match with the column whose values are the submission folders' names");
}

/** The Moodle import file of `grades` for the students of `roster` (see the module comment). */
export function moodleExport(roster: Roster, grades: ClassGrades, opts: { match?: string } = {}): GradeExport {
  const match = moodleMatchColumn(roster, opts.match);
  const matching = matchStudents(roster, roster.rows, grades, match);
  const report = newReport();
  report.students = roster.rows.length;
  report.notInRoster = matching.notInRoster;
  report.warnings.push(...matching.hints, ...grades.problems);
  report.added = grades.columns.map((c) => c.title);
  const records: string[][] = [[roster.header[columnIndex(roster, match)]!.trim(), ...grades.columns.map((c) => c.title)]];
  for (const m of matching.rows) {
    if (!m.grades) {
      report.noSubmission.push({ line: m.row.line, id: m.id });
      continue;
    }
    report.filled++;
    records.push([
      m.id,
      ...grades.columns.map((c) => {
        const g = m.grades!.get(c.key);
        if (g && g.score === null) report.blanks.push({ line: m.row.line, id: m.id, column: c.key, reason: `${g.reason} (Moodle clears a grade given as an empty cell)` });
        return g && g.score !== null ? scoreText(g.score) : '';
      }),
    ]);
  }
  const text = csvText(records, { bom: false, eol: roster.eol });
  assertCsvRoundTrip(text, records);
  return { text, records, report };
}
