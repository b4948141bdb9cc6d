/**
 * Running an experiment once its prediction is in: one runner call per
 * value of the control, then the table, the chart, the verdict on the
 * prediction and the notes entry, all from the measured rows.
 */
import { stepChart } from './chart.ts';
import { judgePrediction, type Experiment, type PredictionAnswer, type Row, type Verdict } from './experiment.ts';
import { formatNumber } from './numeric-answer.ts';
import type { NoteEntry } from './notes.ts';
import { markdownTable } from './table.ts';

/** Everything one run produced. */
export interface ExperimentRun {
  rows: Row[];
  verdict: Verdict;
  /** The rows as a Markdown table. */
  table: string;
  /** The chart column against the control (text). */
  chart: string;
  summary: string;
}

/** Runs `exp` for every control value in order (one launch at a time: a small machine runs them best one by one). */
export async function runExperiment(exp: Experiment, answer: PredictionAnswer, opts: { onRow?: (row: Row) => void } = {}): Promise<ExperimentRun> {
  const rows: Row[] = [];
  for (const value of exp.control.values) {
    const row = await exp.run(value);
    rows.push(row);
    opts.onRow?.(row);
  }
  const table = markdownTable(
    exp.columns.map((c) => c.label),
    rows.map((r) => exp.columns.map((c) => (r[c.key] === undefined ? '' : (c.format ?? formatNumber)(r[c.key]!)))),
  );
  const chart = stepChart(exp.control.values, rows.map((r) => r[exp.chart.key] ?? NaN));
  return { rows, verdict: judgePrediction(exp.prediction, answer, rows), table, chart, summary: exp.summarize(rows) };
}

/** The notes entry of a run. */
export function noteEntry(exp: Experiment, run: ExperimentRun, date = new Date()): NoteEntry {
  return {
    experiment: exp.id,
    title: exp.title,
    chapter: exp.chapter,
    date,
    control: `${exp.control.name} = ${exp.control.values.join(', ')} (${exp.control.changes})`,
    fixed: exp.fixed,
    prediction: run.verdict.predicted,
    held: run.verdict.held,
    measured: run.verdict.measured,
    summary: run.summary,
    table: run.table,
  };
}

/** Reads a prediction typed as text (`--predict c`, `--predict 83`); returns the answer or why it is not one. */
export function parsePrediction(exp: Experiment, text: string): { ok: true; answer: PredictionAnswer } | { ok: false; reason: string } {
  const t = text.trim();
  if (exp.prediction.kind === 'choice') {
    const ids = exp.prediction.options.map((o) => o.id);
    const id = t.toLowerCase().replace(/^\((.*)\)$/, '$1');
    return ids.includes(id) ? { ok: true, answer: { kind: 'choice', option: id } } : { ok: false, reason: `'${t}' is not one of the options ${ids.join(', ')}` };
  }
  const unit = exp.prediction.unit;
  const m = new RegExp(String.raw`^([+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)\s*(?:${unit.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')})?$`).exec(t);
  if (!m || !Number.isFinite(Number(m[1]))) return { ok: false, reason: `'${t}' is not a number in ${unit} (for example 42 or 42 ${unit})` };
  return { ok: true, answer: { kind: 'number', value: Number(m[1]) } };
}
