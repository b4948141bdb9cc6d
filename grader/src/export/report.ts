/**
 * What an LMS export did, for the TA to read before uploading: which
 * students were filled, which cells were left blank and why, which
 * submissions the roster does not know, which columns were added or filled.
 */
import { printable } from '../text.ts';

/** The outcome of one export. */
export interface ExportReport {
  /** Student rows given at least one grade. */
  filled: number;
  /** Student rows of the roster. */
  students: number;
  /** Roster students with no submission graded: their cells are empty (Canvas) or their rows left out (Moodle). */
  noSubmission: { line: number; id: string }[];
  /** Cells left blank for a student who has results, and why. */
  blanks: { line: number; id: string; column: string; reason: string }[];
  /** Submissions graded that the roster does not name: left out. */
  notInRoster: string[];
  /** Columns the export added, and roster columns it filled. */
  added: string[];
  filledColumns: string[];
  /** Everything else a TA should know (points that differ, near misses, unreadable results). */
  warnings: string[];
}

/** An empty report. */
export function newReport(): ExportReport {
  return { filled: 0, students: 0, noSubmission: [], blanks: [], notInRoster: [], added: [], filledColumns: [], warnings: [] };
}

const list = (xs: readonly string[], max = 20) => `${xs.slice(0, max).join(', ')}${xs.length > max ? `, and ${xs.length - max} more` : ''}`;

/** The report as lines to print (every name from a roster or a folder printable). */
export function formatExportReport(r: ExportReport, out: string, noSubmissionMeans: string): string {
  const p = (s: string) => printable(s);
  const lines = [`wrote ${p(out)}: ${r.filled} of ${r.students} students with grades`];
  if (r.filledColumns.length) lines.push(`  filled the roster's columns: ${list(r.filledColumns.map(p))}`);
  if (r.added.length) lines.push(`  added columns: ${list(r.added.map(p))}`);
  if (r.noSubmission.length) lines.push(`  no submission graded (${noSubmissionMeans}): ${list(r.noSubmission.map((s) => `${p(s.id || '(no id)')} (line ${s.line})`))}`);
  if (r.blanks.length) lines.push(`  left blank:`, ...r.blanks.slice(0, 30).map((b) => `    line ${b.line}, ${p(b.id)}, ${p(b.column)}: ${p(b.reason)}`), ...(r.blanks.length > 30 ? [`    and ${r.blanks.length - 30} more`] : []));
  if (r.notInRoster.length) lines.push(`  graded but not in the roster, left out: ${list(r.notInRoster.map(p))}`);
  for (const w of r.warnings) lines.push(`  warning: ${p(w)}`);
  return lines.join('\n');
}
