/**
 * `pnpm experiment [ID]`: without an id, the course's experiments by
 * chapter; with one, the experiment: its control and what it changes, the
 * prediction asked first, then the real runs on the runtime, a table and a
 * chart, whether the prediction held, and an entry in notes/experiments.md.
 *
 *   pnpm experiment                         list them
 *   pnpm experiment ID [--predict X] [--dir DIR]
 *
 * Without a terminal, `--predict` (an option letter, or a number) gives the
 * prediction. Exit code 0 when the run was recorded, 2 when it could not run.
 */
import { relative } from 'node:path';
import input from '@inquirer/input';
import select from '@inquirer/select';
import type { Experiment, PredictionAnswer } from '../experiment.ts';
import { loadCourse } from '../manifest.ts';
import { findExperiment, listExperiments } from '../modules.ts';
import { appendNote, recordedExperiments } from '../notes.ts';
import { studentPaths } from '../paths.ts';
import { noteEntry, parsePrediction, runExperiment } from '../run-experiment.ts';
import { colors as c, parse, runCli, studentRoot, UsageError } from './common.ts';

const USAGE = 'usage: pnpm experiment [ID] [--predict X] [--dir DIR]';

async function ask(exp: Experiment): Promise<PredictionAnswer> {
  const p = exp.prediction;
  if (p.kind === 'choice') {
    const option = await select({ message: p.prompt, choices: p.options.map((o) => ({ name: `(${o.id}) ${o.text}`, value: o.id })) });
    return { kind: 'choice', option };
  }
  const text = await input({ message: `${p.prompt} (${p.unit})`, validate: (t) => { const r = parsePrediction(exp, t); return r.ok ? true : r.reason; } });
  const r = parsePrediction(exp, text);
  if (!r.ok) throw new Error(`BUG: a validated prediction did not parse: ${r.reason}`);
  return r.answer;
}

async function main(): Promise<number> {
  const { values, positionals } = parse(process.argv.slice(2), { predict: { type: 'string' }, dir: { type: 'string' } }, USAGE);
  const root = studentRoot(values.dir);
  const notesFile = studentPaths(root).notes;
  const course = loadCourse();
  if (positionals.length === 0) {
    const recorded = recordedExperiments(notesFile);
    console.log(c.bold('Experiments'), c.dim('(predict, run, record: pnpm experiment <id>)'));
    for (const { chapter, experiment: e } of await listExperiments(course)) {
      const n = recorded.get(e.id) ?? 0;
      console.log(`\n  ${c.bold(e.id)}  ${c.dim(`chapter ${chapter.number}`)}${n ? c.green(`  recorded ${n}×`) : ''}\n    ${e.title}: ${e.question}`);
    }
    return 0;
  }
  if (positionals.length > 1) throw new UsageError(USAGE);
  const { experiment: exp } = await findExperiment(course, positionals[0]!);
  console.log(c.bold(`${exp.title}`) + c.dim(` · chapter ${exp.chapter} · ${exp.id}`));
  console.log(exp.question);
  console.log(`${c.bold('Control:')} ${exp.control.name} = ${exp.control.values.join(', ')}: ${exp.control.changes}.`);
  console.log(`${c.bold('Fixed:')} ${exp.fixed}.\n`);
  let answer: PredictionAnswer;
  if (values.predict !== undefined) {
    const r = parsePrediction(exp, values.predict);
    if (!r.ok) throw new UsageError(`--predict: ${r.reason}`);
    answer = r.answer;
  } else if (process.stdin.isTTY && process.stdout.isTTY) {
    answer = await ask(exp);
  } else {
    const hint = exp.prediction.kind === 'choice' ? exp.prediction.options.map((o) => `${o.id}: ${o.text}`).join('; ') : `a number in ${exp.prediction.unit}`;
    throw new UsageError(`predict first: ${exp.prediction.prompt} Pass --predict X (${hint}), or run this in a terminal`);
  }
  console.log(c.dim('\nRunning on the runtime (virtual clock, traced fabric):'));
  const run = await runExperiment(exp, answer, { onRow: (row) => console.log(c.dim(`  ${exp.control.name} = ${row[exp.control.key]}: done`)) });
  console.log(`\n${run.table}\n`);
  console.log(c.bold(exp.chart.label));
  console.log(`${run.chart}\n${' '.repeat(12)}${c.dim(exp.control.name)}\n`);
  console.log(run.summary);
  console.log(run.verdict.held ? c.green(c.bold(`\nYour prediction held: ${run.verdict.predicted}.`)) : c.red(c.bold(`\nYour prediction did not hold: you predicted ${run.verdict.predicted}.`)));
  console.log(`Measured: ${run.verdict.measured}.`);
  appendNote(notesFile, noteEntry(exp, run));
  console.log(`\nRecorded in ${relative(root, notesFile)}: open it and write one line of what you learned.`);
  return 0;
}

await runCli(main);
