/**
 * Experiments are data: one control and the values it takes, what stays
 * fixed, the prediction asked before anything runs, a runner that measures
 * one row on the real runtime for each value, and how to show and judge
 * the rows. The CLI (`pnpm experiment <id>`) only walks through these
 * fields, so an author adds an experiment without touching it.
 */
import { withinTolerance } from './numeric-answer.ts';

/** One measured row: the control's value and what was measured, by column key. */
export type Row = Record<string, number>;

/** The one thing an experiment changes. */
export interface Control {
  /** Its name as a column header: "ranks N". */
  name: string;
  /** Its key in each row. */
  key: string;
  /** What changing it changes, in words. */
  changes: string;
  /** The values it takes, in order (at least two). */
  values: readonly number[];
}

/** A column of the result table. */
export interface Column {
  key: string;
  label: string;
  /** How a value is shown (default: up to 6 significant digits). */
  format?: (v: number) => string;
}

/** One answer of a multiple-choice prediction, with the test the measured rows must pass for it to hold. */
export interface PredictionOption {
  id: string;
  text: string;
  holds(rows: Row[]): boolean;
}

/** What the student predicts before the run: a choice, or a number compared with one measured value. */
export type Prediction =
  | { kind: 'choice'; prompt: string; options: PredictionOption[] }
  | {
      kind: 'number';
      prompt: string;
      /** The unit the number is in, as shown ("KiB"). */
      unit: string;
      /** How close counts as "held". */
      tolerance: { relative: number };
      /** The measured value the prediction is compared with. */
      measured(rows: Row[]): number;
      /** What that value is, in words ("optimizer memory per rank on 8 ranks"). */
      measuredLabel: string;
    };

/** An experiment. */
export interface Experiment {
  /** Kebab-case, unique in the course; `pnpm experiment <id>`. */
  id: string;
  chapter: number;
  title: string;
  /** The question it answers, as the student reads it first. */
  question: string;
  control: Control;
  /** What stays the same in every run. */
  fixed: string;
  prediction: Prediction;
  /**
   * Measures one row for one value of the control, on the real runtime
   * (launch ranks, read the trace and stats); throws ExperimentRunError
   * when the run itself went wrong.
   */
  run(value: number): Promise<Row>;
  columns: Column[];
  /** The column plotted against the control. */
  chart: { key: string; label: string };
  /** The result in one or two sentences, from the rows. */
  summarize(rows: Row[]): string;
}

/** Declares an experiment (the default export of its module). */
export function defineExperiment(e: Experiment): Experiment {
  return e;
}

/** Whether `value` looks like an experiment (for modules loaded by path). */
export function isExperiment(value: unknown): value is Experiment {
  const e = value as Experiment;
  return e !== null && typeof e === 'object' && typeof e.id === 'string' && typeof e.run === 'function' && typeof e.summarize === 'function' && e.control !== undefined && e.prediction !== undefined;
}

/** A run of an experiment that went wrong (a rank failed, a value came out wrong). */
export class ExperimentRunError extends Error {
  override name = 'ExperimentRunError';
  constructor(
    readonly experiment: string,
    readonly value: number,
    readonly problem: string,
  ) {
    super(`experiment ${experiment}, ${value}: ${problem}`);
  }
}

/** A student's prediction: an option id, or a number. */
export type PredictionAnswer = { kind: 'choice'; option: string } | { kind: 'number'; value: number };

/** Whether a prediction held, and what was measured, in words. */
export interface Verdict {
  held: boolean;
  /** The prediction as the student gave it. */
  predicted: string;
  /** What the measurement says, in words. */
  measured: string;
}

/** Judges `answer` against the measured `rows`. */
export function judgePrediction(p: Prediction, answer: PredictionAnswer, rows: Row[]): Verdict {
  if (p.kind === 'choice') {
    if (answer.kind !== 'choice') throw new TypeError('BUG: a number answer to a choice prediction');
    const chosen = p.options.find((o) => o.id === answer.option);
    if (!chosen) throw new RangeError(`no option '${answer.option}': the options are ${p.options.map((o) => o.id).join(', ')}`);
    const holding = p.options.filter((o) => o.holds(rows));
    const measured = holding.length ? holding.map((o) => `(${o.id}) ${o.text}`).join('; ') : 'none of the options describes the measurement';
    return { held: chosen.holds(rows), predicted: `(${chosen.id}) ${chosen.text}`, measured };
  }
  if (answer.kind !== 'number') throw new TypeError('BUG: a choice answer to a number prediction');
  const m = p.measured(rows);
  return {
    held: withinTolerance(answer.value, m, { relative: p.tolerance.relative }),
    predicted: `${answer.value} ${p.unit}`,
    measured: `${p.measuredLabel}: ${Number(m.toPrecision(4))} ${p.unit} (held means within ${p.tolerance.relative * 100}%)`,
  };
}
