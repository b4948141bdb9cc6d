/**
 * `pnpm grade:export [RESULTS] --canvas ROSTER.csv --out upload.csv [--match COLUMN] [--exercises ex01,ex03]`
 * `pnpm grade:export [RESULTS] --moodle ROSTER.csv --out grades.csv [--match COLUMN] [--exercises ...]`
 * `pnpm grade:export [RESULTS] --junit --out junit.xml`
 *
 * Puts the grades of a results folder (`pnpm grade:batch --out RESULTS`, or
 * `grade:merge`; default `results/`) where TAs keep them: a Canvas gradebook
 * import, a Moodle grade import, or a JUnit report. Read from the rubric
 * files and knowledge-check records. Prints what it did (students without a
 * submission, blank cells and why, submissions the roster lacks). Exits 0
 * when the file is written, 2 when it could not be (a bad roster names the
 * line and what was expected).
 */
import { relative } from 'node:path';
import { writeAtomic } from '../atomic.ts';
import { canvasExport, CANVAS_DEFAULT_MATCH, type GradeExport } from '../export/canvas.ts';
import { collectGrades } from '../export/grades.ts';
import { batchJunitXml, writeJunit } from '../export/junit.ts';
import { moodleExport } from '../export/moodle.ts';
import { formatExportReport } from '../export/report.ts';
import { readRoster } from '../export/roster.ts';
import { printable } from '../text.ts';
import { parseArgs, runCli, UsageError } from './args.ts';

const USAGE = `usage: pnpm grade:export [RESULTS] --canvas ROSTER.csv --out upload.csv [--match COLUMN] [--exercises ex01,ex03]
       pnpm grade:export [RESULTS] --moodle ROSTER.csv --out grades.csv [--match COLUMN] [--exercises ex01,ex03]
       pnpm grade:export [RESULTS] --junit --out junit.xml
RESULTS is the --out folder of pnpm grade:batch or grade:merge (default: results). --match names the roster
column whose values are the submission folders' names (Canvas: '${CANVAS_DEFAULT_MATCH}' by default; Moodle: Username,
Email address or ID number, whichever the roster has).`;

async function main(): Promise<number> {
  const { positional, options } = parseArgs(process.argv.slice(2), ['canvas', 'moodle', 'out', 'match', 'exercises'], ['junit', 'help'], USAGE);
  if (options.help) {
    console.log(USAGE);
    return 0;
  }
  if (positional.length > 1) throw new UsageError(`give one results folder, got: ${positional.join(' ')}\n${USAGE}`);
  const formats = (['canvas', 'moodle', 'junit'] as const).filter((f) => options[f] !== undefined);
  if (formats.length !== 1) throw new UsageError(`choose one of --canvas ROSTER.csv, --moodle ROSTER.csv or --junit${formats.length ? ` (got ${formats.map((f) => `--${f}`).join(' and ')})` : ''}\n${USAGE}`);
  if (typeof options.out !== 'string') throw new UsageError(`--out FILE is required: where the export goes\n${USAGE}`);
  const results = positional[0] ?? 'results';
  const out = options.out;
  const shown = relative(process.cwd(), out) || out;

  if (formats[0] === 'junit') {
    if (options.match !== undefined || options.exercises !== undefined) throw new UsageError(`--junit takes every rubric of the folder: --match and --exercises are for --canvas and --moodle\n${USAGE}`);
    const { xml, left } = batchJunitXml(results);
    writeJunit(out, xml);
    console.log(`wrote ${printable(shown)}: the JUnit report of every rubric in ${printable(results)}`);
    if (left.length) console.log(`  left out (the rubric file does not validate, or is of another pair): ${left.map((l) => printable(l)).join(', ')}`);
    return 0;
  }
  const exercises = typeof options.exercises === 'string' ? options.exercises.split(',').filter(Boolean).map((e) => `ex${(/\d+/.exec(e)?.[0] ?? e).padStart(2, '0')}`) : undefined;
  const grades = collectGrades(results, exercises);
  const roster = readRoster(String(options[formats[0]!]));
  const match = typeof options.match === 'string' ? options.match : undefined;
  const done: GradeExport = formats[0] === 'canvas' ? canvasExport(roster, grades, { match }) : moodleExport(roster, grades, { match });
  writeAtomic(out, done.text);
  console.log(formatExportReport(done.report, shown, formats[0] === 'canvas' ? 'their cells are empty' : 'no row for them, so Moodle keeps what it has'));
  console.log(formats[0] === 'canvas' ? 'Upload it in Canvas: Grades, Import; Canvas shows every change before it saves any.' : 'Import it in Moodle: Grades, Import, CSV file; map the first column to the user field it holds, and each other column to a grade item (or "new grade item").');
  return 0;
}

await runCli(main);
