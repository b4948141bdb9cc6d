/**
 * From a seed to the questions of one quiz attempt: which questions, in
 * which order, with which variant, and each variant laid out for the
 * student (options shuffled and lettered). All of it is a function of the
 * attempt's seed and the bank revision, so the regrade rebuilds exactly
 * what the student saw.
 */
import { hashString, mixSeed, Rng } from './rng.ts';
import type { Bank, ChoiceOption, NumericVariant, Question } from './question.ts';

/** Keys mixed into the seed, so the draw, a variant and its option order are independent streams. */
const DRAW_KEY = 1;
const VARIANT_KEY = 2;
const OPTIONS_KEY = 3;

/** A lettered option as shown. */
export interface PresentedOption extends ChoiceOption {
  label: string;
  correct: boolean;
}

/** A choice variant as shown: options shuffled and lettered a, b, c, ... */
export interface PresentedChoice {
  kind: 'choice';
  prompt: string;
  options: PresentedOption[];
  explanation: string;
}

/** What the student sees and is graded against for one question. */
export type Presented = NumericVariant | PresentedChoice;

/** One question of an attempt. */
export interface DrawnQuestion {
  /** Position in the attempt, from 0. */
  index: number;
  question: Question;
  /** The seed of its variant (recorded in the attempt). */
  variant: number;
  presented: Presented;
}

/** The questions of `bank` that an attempt drawn at `revision` may contain. */
export function eligibleQuestions(bank: Bank, revision: number): Question[] {
  return bank.questions.filter((q) => q.since <= revision && (q.retired === undefined || q.retired > revision));
}

/** The variant seed of question `id` in an attempt with `seed`. */
export function variantSeed(seed: number, id: string): number {
  return mixSeed(seed, hashString(id), VARIANT_KEY);
}

/** Question `q` with variant seed `variant`, laid out for the student. */
export function present(q: Question, variant: number): Presented {
  const v = q.generate(new Rng(variant));
  if (v.kind === 'numeric') return v;
  const order = new Rng(mixSeed(variant, OPTIONS_KEY)).shuffle([{ ...v.correct, correct: true }, ...v.distractors.map((d) => ({ ...d, correct: false }))]);
  return { kind: 'choice', prompt: v.prompt, explanation: v.explanation, options: order.map((o, i) => ({ ...o, label: String.fromCharCode(97 + i) })) };
}

/**
 * The `count` questions of an attempt with `seed`: the eligible questions
 * ordered by a seeded key of each id (so adding a question to the bank
 * moves no other question), the first `count` of them.
 */
export function drawQuiz(bank: Bank, seed: number, opts: { count: number; revision?: number }): DrawnQuestion[] {
  const pool = eligibleQuestions(bank, opts.revision ?? bank.revision);
  const keyed = pool.map((q) => ({ q, key: mixSeed(seed, hashString(q.id), DRAW_KEY) }));
  keyed.sort((a, b) => a.key - b.key || (a.q.id < b.q.id ? -1 : 1));
  return keyed.slice(0, opts.count).map(({ q }, index) => {
    const variant = variantSeed(seed, q.id);
    return { index, question: q, variant, presented: present(q, variant) };
  });
}
