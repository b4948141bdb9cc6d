/**
 * Matching a roster's students to the submissions graded: by one column of
 * the roster whose values are the submission folders' names (a login, an
 * email, a student number). Exact matches only: a near match (another case)
 * is reported with the fix, never taken, since a wrong match would give one
 * student another's grade. A value that two rows share is an error naming
 * both lines.
 */
import { columnIndex, RosterError, type Roster, type RosterRow } from './roster.ts';
import type { ClassGrades, GradeCell } from './grades.ts';

/** A roster row with the grades matched to it. */
export interface MatchedRow {
  row: RosterRow;
  /** The row's value in the match column, trimmed. */
  id: string;
  /** Its grades by column key; null when no submission has this id. */
  grades: Map<string, GradeCell> | null;
}

/** What matching found. */
export interface Matching {
  /** The match column's index in the roster. */
  column: number;
  /** The student rows, in roster order. */
  rows: MatchedRow[];
  /** Submissions graded that no roster row names (left out of the export). */
  notInRoster: string[];
  /** Hints for near misses: `Bob` graded, `bob` in the roster. */
  hints: string[];
}

/**
 * Matches `students` (roster rows that are students, in order) to `grades`
 * by column `match`. Throws RosterError for a missing column or a value two
 * rows share.
 */
export function matchStudents(roster: Roster, students: readonly RosterRow[], grades: ClassGrades, match: string): Matching {
  const column = columnIndex(roster, match);
  if (column < 0) {
    throw new RosterError(roster.file, 1, `a column '${match}' to match students by (--match)`, `there is none (the header has ${roster.header.map((h) => `'${h}'`).join(', ')})`, 'Pass --match with the column whose values are the submission folders\' names');
  }
  const firstLine = new Map<string, number>();
  const rows: MatchedRow[] = [];
  for (const row of students) {
    const id = (row.cells[column] ?? '').trim();
    if (id !== '') {
      const before = firstLine.get(id);
      if (before !== undefined) throw new RosterError(roster.file, row.line, `each '${roster.header[column]}' once`, `'${id}' is also on line ${before}`, 'Remove the duplicate row, or match by a column that tells the two apart (--match)');
      firstLine.set(id, row.line);
    }
    rows.push({ row, id, grades: id === '' ? null : (grades.students.get(id) ?? null) });
  }
  const notInRoster = [...grades.students.keys()].filter((s) => !firstLine.has(s)).sort();
  const lower = new Map([...firstLine.keys()].map((id) => [id.toLowerCase(), id]));
  const hints = notInRoster.flatMap((s) => {
    const near = lower.get(s.toLowerCase());
    return near ? [`'${s}' was graded and the roster has '${near}': ids must match exactly (rename the submission's folder and rerun grade:batch for it)`] : [];
  });
  return { column, rows, notInRoster, hints };
}
