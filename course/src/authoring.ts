/**
 * What a bank or an experiment module imports: the definers, the seeded
 * stream, and small helpers for writing variants. Kept apart from the
 * engine so that a chapter's modules load nothing they do not use.
 */
import { withinTolerance, type Tolerance } from './numeric-answer.ts';
import type { Misconception } from './question.ts';

export { numeric, choice, defineBank, type Bank, type Question, type ChoiceOption, type Misconception, type NumericVariant, type ChoiceVariant } from './question.ts';
export { defineExperiment, ExperimentRunError, type Experiment, type Row, type Column, type Prediction, type PredictionOption } from './experiment.ts';
export { formatNumber, type Tolerance, type NumericFormat } from './numeric-answer.ts';
/** The seeded stream a question's `generate` draws from. */
export type { Rng } from './rng.ts';

/**
 * The misconceptions whose value differs from `answer` by more than the
 * tolerance, each value once. For some parameters a misconception gives the
 * right number by accident (with N = 2 ranks, (N-1)·S equals 2(N-1)/N·S);
 * such a variant cannot tell that misconception apart, so it is not listed.
 */
export function distinctMisconceptions(answer: number, tolerance: Tolerance, list: Misconception[]): Misconception[] {
  const out: Misconception[] = [];
  for (const m of list) {
    if (!Number.isFinite(m.value) || withinTolerance(m.value, answer, tolerance)) continue;
    if (out.some((o) => withinTolerance(m.value, o.value, tolerance))) continue;
    out.push(m);
  }
  return out;
}

/** `x` rounded to `digits` significant digits, as a number (for values shown in prompts). */
export function sig(x: number, digits = 4): number {
  return Number(x.toPrecision(digits));
}
