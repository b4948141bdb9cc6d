/**
 * One knowledge-check session: draw the attempt from a seed, record it in
 * the student's attempt file before the first answer (so an abandoned
 * attempt still counts as taken), record each answer as it is given, and
 * grade the result with the same code the regrade uses.
 */
import { existsSync } from 'node:fs';
import { moveAside, MAX_ATTEMPT_FILE_BYTES, readBounded, saveAttempts, type Attempt, type AttemptsFile } from './attempt.ts';
import { drawQuiz, type DrawnQuestion } from './draw.ts';
import { gradeAttempt, type AttemptResult } from './grade-attempt.ts';
import type { Chapter } from './manifest.ts';
import type { Bank } from './question.ts';
import { AttemptLimitError } from './errors.ts';
import { validatorFor } from './validators.ts';

/** Attempts one file holds (course/schema/attempt.schema.json says the same). */
export const MAX_ATTEMPTS = 200;

/** An attempt in progress. */
export class QuizSession {
  readonly drawn: DrawnQuestion[];
  readonly attempt: Attempt;
  /** Set when an unreadable attempt file had to be moved aside: where it went. */
  readonly movedAside: string | null;
  /** True when an earlier attempt in the file used the same seed (this one will not count). */
  readonly repeatedSeed: boolean;
  private readonly data: AttemptsFile;

  constructor(
    readonly file: string,
    readonly chapter: Chapter,
    readonly bank: Bank,
    seed: number,
    mode: Attempt['mode'],
    now = new Date(),
  ) {
    const loaded = loadForAppend(file, chapter.number);
    this.movedAside = loaded.broken ? moveAside(file, now) : null;
    this.data = loaded.data;
    if (this.data.attempts.length >= MAX_ATTEMPTS) throw new AttemptLimitError(file, MAX_ATTEMPTS);
    this.repeatedSeed = this.data.attempts.some((a) => a.seed === seed);
    this.drawn = drawQuiz(bank, seed, { count: chapter.knowledgeCheck!.questions });
    this.attempt = { seed, bankRevision: bank.revision, mode, startedAt: now.toISOString(), questions: this.drawn.map((d) => ({ id: d.question.id, variant: d.variant })) };
    this.data.attempts.push(this.attempt);
    this.save();
  }

  /** Records the answer to question `index` (a well-formed one: malformed answers are never recorded). */
  answer(index: number, text: string, at = new Date()): void {
    const q = this.attempt.questions[index]!;
    q.answer = text.trim().slice(0, 200);
    q.answeredAt = at.toISOString();
    if (this.attempt.questions.every((x) => x.answer !== undefined)) this.attempt.finishedAt = at.toISOString();
    this.save();
  }

  /** The attempt graded as the regrade grades it. */
  result(): AttemptResult {
    const kc = this.chapter.knowledgeCheck!;
    return gradeAttempt(this.attempt, { bank: this.bank, questions: kc.questions, passPercent: kc.passPercent }, this.data.attempts.length - 1);
  }

  private save(): void {
    saveAttempts(this.file, this.data);
  }
}

/** The attempt file's content to append to; `broken` when it exists but cannot be read (it is then moved aside, never overwritten). */
function loadForAppend(file: string, chapter: number): { data: AttemptsFile; broken: boolean } {
  const fresh = { data: { schemaVersion: 1 as const, chapter, attempts: [] }, broken: false };
  if (!existsSync(file)) return fresh;
  try {
    const r = readBounded(file, MAX_ATTEMPT_FILE_BYTES);
    if ('tooLarge' in r) return { ...fresh, broken: true };
    const data = JSON.parse(r.text) as AttemptsFile;
    const validate = validatorFor('attempt.schema.json');
    if (!validate(data) || data.chapter !== chapter) return { ...fresh, broken: true };
    return { data, broken: false };
  } catch {
    return { ...fresh, broken: true };
  }
}
