/**
 * Grading one attempt from what it honestly holds: the seed (which fixes
 * the questions, their order and their variants) and the answers, matched
 * by position. The ids and variants the attempt recorded are compared with
 * what the seed gives and any difference is noted, but never trusted.
 */
import { drawQuiz } from './draw.ts';
import { expectedAnswer, gradeAnswer } from './grade-answer.ts';
import type { Attempt } from './attempt.ts';
import type { Bank } from './question.ts';

/** How one question of an attempt was graded. */
export interface QuestionResult {
  /** Position in the attempt, from 0. */
  index: number;
  /** The question the seed puts here. */
  id: string;
  /** Its variant seed, from the attempt's seed. */
  variant: number;
  kind: 'numeric' | 'choice';
  topic: string;
  answer: string | null;
  /** 'malformed' only for a stored answer that cannot be read (an edited file); it scores nothing. */
  status: 'correct' | 'wrong' | 'unanswered' | 'malformed';
  /** The right answer as shown. */
  expected: string;
  /** What the file recorded for this position, when it is not what the seed gives. */
  recorded?: { id: string; variant: number };
}

/** How one attempt was graded. */
export interface AttemptResult {
  /** Position in the file, from 0. */
  index: number;
  seed: number;
  bankRevision: number;
  mode: Attempt['mode'];
  startedAt: string;
  finishedAt: string | null;
  /** Every question has an answer. */
  complete: boolean;
  /** Whether it counts towards the best score (a repeated seed does not: its answers were already shown). */
  counted: boolean;
  score: number;
  maxScore: number;
  passed: boolean;
  questions: QuestionResult[];
  /** What differs from an honest attempt (edited ids or variants, extra entries, a repeated seed). */
  notes: string[];
}

/** What an attempt is graded against. */
export interface GradingSpec {
  bank: Bank;
  /** Questions per attempt. */
  questions: number;
  passPercent: number;
}

/** Whether `score` of `maxScore` passes at `passPercent`. */
export function passes(score: number, maxScore: number, passPercent: number): boolean {
  return maxScore > 0 && score * 100 >= passPercent * maxScore;
}

/** Grades `attempt` (at position `index` of its file) against `spec`. */
export function gradeAttempt(attempt: Attempt, spec: GradingSpec, index = 0): AttemptResult {
  const notes: string[] = [];
  const maxScore = spec.questions;
  const base = { index, seed: attempt.seed, bankRevision: attempt.bankRevision, mode: attempt.mode, startedAt: attempt.startedAt, finishedAt: attempt.finishedAt ?? null, counted: true, maxScore };
  if (attempt.bankRevision > spec.bank.revision) {
    notes.push(`drawn at bank revision ${attempt.bankRevision}, but the bank is at revision ${spec.bank.revision}: it cannot be reproduced, so it scores 0 (an edited file, or a course older than the attempt)`);
    return { ...base, complete: false, counted: false, score: 0, passed: false, questions: [], notes };
  }
  const drawn = drawQuiz(spec.bank, attempt.seed, { count: spec.questions, revision: attempt.bankRevision });
  if (attempt.questions.length > drawn.length) notes.push(`${attempt.questions.length - drawn.length} recorded question(s) beyond the ${drawn.length} the seed gives were ignored`);
  const questions = drawn.map((d): QuestionResult => {
    const rec = attempt.questions[d.index];
    const answer = rec?.answer ?? null;
    const graded = answer === null ? null : gradeAnswer(d.presented, answer);
    const expected = expectedAnswer(d.presented);
    const status = graded === null ? 'unanswered' : graded.status;
    const out: QuestionResult = { index: d.index, id: d.question.id, variant: d.variant, kind: d.question.kind, topic: d.question.topic, answer, status, expected };
    if (rec && (rec.id !== d.question.id || rec.variant !== d.variant)) {
      out.recorded = { id: rec.id, variant: rec.variant };
      notes.push(`question ${d.index + 1}: the file records ${rec.id} variant ${rec.variant}, the seed gives ${d.question.id} variant ${d.variant}; graded against the seed's`);
    }
    return out;
  });
  const score = questions.filter((q) => q.status === 'correct').length;
  return { ...base, complete: questions.every((q) => q.answer !== null), score, passed: passes(score, maxScore, spec.passPercent), questions, notes };
}
