/**
 * Knowledge-check questions are data with code, in the way PrairieLearn's
 * `generate()` works: a question draws its parameters from a seeded stream
 * and computes its own answer, so every attempt gets a fresh variant and
 * the answer key is never written down anywhere. Where it applies, the
 * answer comes from the kit itself (`estimateTime`, `chunkBounds`), so the
 * quiz and the labs cannot disagree.
 */
import type { NumericFormat } from './numeric-answer.ts';
import type { Rng } from './rng.ts';

/** One option of a multiple-choice question. */
export interface ChoiceOption {
  text: string;
  /** For the right option, why it is right; for a distractor, the misconception it stands for and why it fails. */
  why: string;
}

/** A wrong number that a real misconception produces, and what to say when a student gives it. */
export interface Misconception {
  value: number;
  why: string;
}

/** One variant of a numeric question: the text, the computed answer, how it is graded. */
export interface NumericVariant {
  kind: 'numeric';
  prompt: string;
  answer: number;
  format: NumericFormat;
  /** How the answer is computed, shown after every answer. */
  explanation: string;
  /** Values the usual mistakes give; each must lie outside the tolerance (the course check verifies it for many seeds). */
  misconceptions: Misconception[];
}

/** One variant of a multiple-choice question. Options are shuffled by the engine, not by the question. */
export interface ChoiceVariant {
  kind: 'choice';
  prompt: string;
  correct: ChoiceOption;
  /** The wrong options: each a misconception people really hold, not filler. */
  distractors: ChoiceOption[];
  /** The idea behind the question, shown after every answer. */
  explanation: string;
}

/** A variant of either kind. */
export type Variant = NumericVariant | ChoiceVariant;

/** A question of a bank. */
export interface Question {
  /** Unique in its bank, kebab-case; recorded in attempts, so never reused for a different question. */
  id: string;
  kind: Variant['kind'];
  /** A few words: what it is about (shown in lists and reports). */
  topic: string;
  /** The bank revision that added it (default 1). An attempt draws only from the questions its revision had. */
  since: number;
  /** The bank revision from which it is no longer drawn (it stays in the bank so that older attempts still regrade). */
  retired?: number;
  /** The variant for one seeded stream. Deterministic: the same stream gives the same variant. */
  generate(rng: Rng): Variant;
}

type Def<V> = { id: string; topic: string; since?: number; retired?: number; generate(rng: Rng): Omit<V, 'kind'> };

/** A numeric question: `generate` returns the prompt, the answer, its format and the misconceptions' values. */
export function numeric(def: Def<NumericVariant>): Question {
  return { id: def.id, kind: 'numeric', topic: def.topic, since: def.since ?? 1, ...(def.retired ? { retired: def.retired } : {}), generate: (rng) => ({ kind: 'numeric', ...def.generate(rng) }) };
}

/** A multiple-choice question: `generate` returns the prompt, the right option and the distractors. */
export function choice(def: Def<ChoiceVariant>): Question {
  return { id: def.id, kind: 'choice', topic: def.topic, since: def.since ?? 1, ...(def.retired ? { retired: def.retired } : {}), generate: (rng) => ({ kind: 'choice', ...def.generate(rng) }) };
}

/** A chapter's question bank. */
export interface Bank {
  /** The chapter it belongs to (1-based, as in the course manifest). */
  chapter: number;
  /**
   * Raised by one whenever questions are added or retired. An attempt
   * records the revision it was drawn at, so adding a question later does
   * not change which questions an old attempt is regraded against.
   */
  revision: number;
  questions: Question[];
}

/** Declares a bank (the default export of a chapter's `bank.ts`). */
export function defineBank(bank: Bank): Bank {
  return bank;
}

/** Whether `value` is a bank as `defineBank` makes it (for modules loaded by path). */
export function isBank(value: unknown): value is Bank {
  const b = value as Bank;
  return b !== null && typeof b === 'object' && Number.isInteger(b.chapter) && Number.isInteger(b.revision) && Array.isArray(b.questions);
}
