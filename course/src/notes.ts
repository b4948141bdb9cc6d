/**
 * The student's experiment notes, `notes/experiments.md`: one entry per
 * run, appended, never rewritten, so the file is the student's lab book.
 * Each entry starts with a heading that names the experiment, which is how
 * `pnpm course` counts the experiments recorded.
 */
import { appendFileSync, existsSync, mkdirSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { readBounded } from './attempt.ts';

/** What one entry records. */
export interface NoteEntry {
  experiment: string;
  title: string;
  chapter: number;
  date: Date;
  /** The control and its values, in words. */
  control: string;
  fixed: string;
  prediction: string;
  held: boolean;
  measured: string;
  summary: string;
  /** The result table (Markdown). */
  table: string;
}

/** The placeholder line the student completes. */
export const LEARNED_PROMPT = '- **What I learned** (one line, in your own words): ';

const HEADER = '# Experiment notes\n\nOne entry per `pnpm experiment` run: what you predicted, what the run measured, and a line of what you learned. Complete the last line of each entry.\n';

/** The entry as Markdown. */
export function formatEntry(e: NoteEntry): string {
  const when = `${e.date.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
  return [
    `## ${e.experiment} · ${when}`,
    '',
    `**${e.title}** (chapter ${e.chapter}). Control: ${e.control}. Fixed: ${e.fixed}.`,
    '',
    `- **Prediction:** ${e.prediction}`,
    `- **Result:** ${e.summary} Measured: ${e.measured}.`,
    `- **Did it hold?** ${e.held ? 'Yes.' : 'No.'}`,
    LEARNED_PROMPT,
    '',
    e.table,
    '',
  ].join('\n');
}

/** Appends `e` to the notes file at `file` (creating it and its folder if needed). */
export function appendNote(file: string, e: NoteEntry): void {
  mkdirSync(dirname(file), { recursive: true });
  const fresh = !existsSync(file) || statSync(file).size === 0;
  appendFileSync(file, `${fresh ? HEADER : ''}\n${formatEntry(e)}`);
}

/** How many entries each experiment has in the notes file at `file` (none if it does not exist). */
export function recordedExperiments(file: string): Map<string, number> {
  const counts = new Map<string, number>();
  if (!existsSync(file)) return counts;
  // Notes are the student's own file: read a bounded prefix, a lab book is never this large.
  const read = readBounded(file, 4 * 2 ** 20);
  const text = 'text' in read ? read.text : '';
  for (const m of text.matchAll(/^## ([a-z0-9]+(?:-[a-z0-9]+)*) · /gm)) counts.set(m[1]!, (counts.get(m[1]!) ?? 0) + 1);
  return counts;
}
