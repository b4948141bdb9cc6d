/**
 * Canvas: the gradebook CSV a TA exports from Canvas (Grades, Export),
 * returned with the grades filled in, ready for Canvas's gradebook import.
 *
 * Canvas's export starts with the columns Student, ID, SIS User ID, SIS Login
 * ID and Section (and sometimes Integration ID), then one column per
 * assignment (`Name (assignment id)`) and its read-only totals; its second
 * line is the "Points Possible" row, and it may hold other rows without a
 * Canvas user ID (posting policies). The file comes back with every row and
 * column where it was and every cell as it was, except:
 *
 * - a roster column whose name starts with an exercise or knowledge-check id
 *   (`ex01 All-reduce mean (4711)`, `quiz1`) is filled with that grade;
 * - an exercise or knowledge check with no such column gets a new one at the
 *   end (`ex01 All-reduce mean`), which Canvas offers to create as an
 *   assignment, with its points in the Points Possible row;
 * - a student with no submission graded gets empty cells in those columns.
 */
import { columnIndex, assertCsvRoundTrip, csvText, requireColumns, RosterError, type Roster } from './roster.ts';
import { matchStudents } from './match.ts';
import { scoreText, type ClassGrades, type GradeColumn } from './grades.ts';
import { newReport, type ExportReport } from './report.ts';

/** The columns every Canvas gradebook export starts with. */
export const CANVAS_ID_COLUMNS = Object.freeze(['Student', 'ID', 'SIS User ID', 'SIS Login ID', 'Section']);
/** The column students are matched by unless --match says otherwise. */
export const CANVAS_DEFAULT_MATCH = 'SIS Login ID';
/** The first cell of Canvas's points row (after its leading spaces). */
export const POINTS_POSSIBLE = 'Points Possible';

/** An export's text and what it did. */
export interface GradeExport {
  text: string;
  records: string[][];
  report: ExportReport;
}

/** Where each grade column goes: an existing roster column, or a new one at the end. */
export function placeColumns(roster: Roster, columns: readonly GradeColumn[], reserved: readonly string[]): { column: GradeColumn; index: number; added: boolean }[] {
  const fixed = new Set(reserved.map((c) => columnIndex(roster, c)));
  let next = roster.header.length;
  return columns.map((column) => {
    const like = new RegExp(`^\\s*${column.key}\\b`, 'i');
    const found = roster.header.flatMap((h, i) => (!fixed.has(i) && like.test(h) ? [i] : []));
    if (found.length > 1) {
      throw new RosterError(roster.file, 1, `one column for ${column.key}`, `${found.map((i) => `'${roster.header[i]}'`).join(' and ')} all start with ${column.key}`, 'Rename all but one of them in the LMS, then export the roster again');
    }
    return found.length === 1 ? { column, index: found[0]!, added: false } : { column, index: next++, added: true };
  });
}

/** The Canvas upload of `grades` into `roster`, matching students by column `match` (see the module comment). */
export function canvasExport(roster: Roster, grades: ClassGrades, opts: { match?: string } = {}): GradeExport {
  requireColumns(roster, CANVAS_ID_COLUMNS, 'a Canvas gradebook export');
  const idCol = columnIndex(roster, 'ID');
  const isPoints = (cells: readonly string[]) => (cells[0] ?? '').trim() === POINTS_POSSIBLE;
  // Rows without a Canvas user ID are Canvas's own (points, posting policies): kept as they are.
  const students = roster.rows.filter((r) => (r.cells[idCol] ?? '').trim() !== '' && !isPoints(r.cells));
  const matching = matchStudents(roster, students, grades, opts.match ?? CANVAS_DEFAULT_MATCH);
  const places = placeColumns(roster, grades.columns, [...CANVAS_ID_COLUMNS, 'Integration ID', 'Root Account']);
  const width = roster.header.length + places.filter((p) => p.added).length;
  const report = newReport();
  report.students = students.length;
  report.notInRoster = matching.notInRoster;
  report.warnings.push(...matching.hints, ...grades.problems);
  report.added = places.filter((p) => p.added).map((p) => p.column.title);
  report.filledColumns = places.filter((p) => !p.added).map((p) => roster.header[p.index]!);

  const header = [...roster.header, ...places.filter((p) => p.added).map((p) => p.column.title)];
  const byLine = new Map(matching.rows.map((m) => [m.row.line, m]));
  const records = [header];
  let sawPoints = false;
  for (const row of roster.rows) {
    const cells = [...row.cells, ...Array<string>(width - row.cells.length).fill('')];
    const m = byLine.get(row.line);
    if (isPoints(row.cells)) {
      sawPoints = true;
      for (const p of places) {
        if (p.added) cells[p.index] = scoreText(p.column.maxScore);
        else if (Number(cells[p.index]) !== p.column.maxScore && cells[p.index]!.trim() !== '') report.warnings.push(`'${roster.header[p.index]}' is worth ${cells[p.index]!.trim()} points in Canvas but ${p.column.key} is out of ${p.column.maxScore}: Canvas records the score as given, out of its own points`);
      }
    } else if (m) {
      if (!m.grades) report.noSubmission.push({ line: row.line, id: m.id });
      else report.filled++;
      for (const p of places) {
        const g = m.grades?.get(p.column.key);
        if (g && g.score === null) report.blanks.push({ line: row.line, id: m.id, column: p.column.key, reason: g.reason });
        cells[p.index] = g && g.score !== null ? scoreText(g.score) : '';
      }
    }
    records.push(cells);
  }
  if (!sawPoints && report.added.length) report.warnings.push(`the roster has no '${POINTS_POSSIBLE}' row: Canvas asks for the points of the new assignments when it creates them`);
  assertPreserved(roster, records, new Set(places.map((p) => p.index)));
  const text = csvText(records, roster);
  assertCsvRoundTrip(text, records);
  return { text, records, report };
}

/**
 * Checks that `records` hold the roster's rows in its order, every cell as
 * it was except in the grade columns `touched`: what "nothing lost or
 * reordered" means, checked on what is about to be written.
 */
export function assertPreserved(roster: Roster, records: readonly (readonly string[])[], touched: ReadonlySet<number>): void {
  const rows = [roster.header, ...roster.rows.map((r) => r.cells)];
  // The header keeps every name; rows keep every cell outside the grade columns.
  const ok = records.length === rows.length && rows.every((cells, i) => cells.every((c, j) => (i > 0 && touched.has(j)) || records[i]![j] === c));
  if (!ok) throw new Error('BUG: the export changed, dropped or moved a cell of the roster');
}
