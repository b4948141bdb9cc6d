/**
 * A chapter's bank: its shape (ids, revisions, enough questions, enough of
 * them numeric), then every question generated for many seeds, the way an
 * attempt would draw them. A question whose code throws, is not
 * deterministic, cannot grade its own answer as right, or lists a
 * misconception or distractor that is graded right, is an error naming the
 * question and the seed.
 */
import { eligibleQuestions, present, variantSeed, type Presented } from '../draw.ts';
import { expectedAnswer, gradeAnswer } from '../grade-answer.ts';
import { formatNumber } from '../numeric-answer.ts';
import { unitOf } from '../units.ts';
import type { Chapter } from '../manifest.ts';
import type { Bank, Question } from '../question.ts';
import type { Findings } from './findings.ts';

/** Least bank size of a complete chapter (DESIGN.md: 10 questions from a bank of 15 or more). */
export const MIN_BANK = 15;
/** Least share of numeric questions in a complete chapter's bank. */
export const MIN_NUMERIC_SHARE = 1 / 3;

const ID = /^[a-z0-9]+(-[a-z0-9]+)*$/;

/** Problems of one presented variant, or [] when it is sound. */
export function variantProblems(p: Presented): string[] {
  const out: string[] = [];
  if (!p.prompt?.trim()) out.push('an empty prompt');
  if (!p.explanation?.trim()) out.push('an empty explanation');
  if (p.kind === 'numeric') {
    if (!Number.isFinite(p.answer)) out.push(`a non-finite answer (${p.answer})`);
    if (p.format.unit !== null) {
      try {
        unitOf(p.format.unit);
      } catch (e) {
        out.push((e as Error).message);
      }
    }
    const { relative = 0, absolute = 0 } = p.format.tolerance;
    if (!(relative >= 0 && absolute >= 0)) out.push('a negative tolerance');
    if (out.length) return out;
    const typed = formatNumber(p.answer);
    for (const t of [typed, p.format.unit ? `${typed} ${p.format.unit}` : typed]) {
      const g = gradeAnswer(p, t);
      if (g.status !== 'correct') out.push(`its own answer typed as '${t}' is graded ${g.status}${g.status === 'malformed' ? ` (${g.reason})` : ''}`);
    }
    for (const m of p.misconceptions) {
      if (!m.why?.trim()) out.push(`a misconception (${m.value}) without a why`);
      const g = gradeAnswer(p, formatNumber(m.value));
      if (g.status !== 'wrong') out.push(`the misconception value ${formatNumber(m.value)} is graded ${g.status}, not wrong (answer ${expectedAnswer(p)})`);
    }
  } else {
    const texts = p.options.map((o) => o.text.trim().toLowerCase());
    if (p.options.filter((o) => o.correct).length !== 1) out.push('not exactly one right option');
    if (p.options.length < 3) out.push(`only ${p.options.length} options: give at least two distractors`);
    if (new Set(texts).size !== texts.length) out.push('two options with the same text');
    for (const o of p.options) {
      if (!o.text.trim()) out.push(`option (${o.label}) has no text`);
      if (!o.why?.trim()) out.push(`option (${o.label}) has no why`);
      const g = gradeAnswer(p, o.label);
      if ((g.status === 'correct') !== o.correct) out.push(`option (${o.label}) is graded ${g.status}`);
    }
  }
  return out;
}

function checkQuestion(q: Question, c: Chapter, f: Findings, seeds: number): void {
  for (let seed = 1; seed <= seeds; seed++) {
    const variant = variantSeed(seed, q.id);
    let p: Presented;
    let again: Presented;
    try {
      p = present(q, variant);
      again = present(q, variant);
    } catch (e) {
      f.error('question', c.number, q.id, `question ${q.id} throws for attempt seed ${seed} (variant ${variant}): ${(e as Error).message}`);
      return;
    }
    if (p.kind !== q.kind) {
      f.error('question', c.number, q.id, `question ${q.id} is declared ${q.kind} but generates a ${p.kind} variant (seed ${seed})`);
      return;
    }
    if (JSON.stringify(p) !== JSON.stringify(again)) {
      f.error('question', c.number, q.id, `question ${q.id} is not deterministic: seed ${seed} (variant ${variant}) gave two different variants; draw every random thing from the rng it is given`);
      return;
    }
    const problems = variantProblems(p);
    if (problems.length) {
      f.error('question', c.number, q.id, `question ${q.id}, attempt seed ${seed} (variant ${variant}): ${problems.join('; ')}`);
      return;
    }
  }
}

/** Checks `bank`, the bank of chapter `c`. */
export function checkBank(bank: Bank, c: Chapter, f: Findings, opts: { seeds: number }): void {
  const where = c.knowledgeCheck!.bank;
  if (bank.chapter !== c.number) f.error('bank', c.number, where, `the bank says chapter ${bank.chapter}, but course.json uses it for chapter ${c.number}`);
  if (!(Number.isInteger(bank.revision) && bank.revision >= 1)) f.error('bank', c.number, where, `revision must be a whole number from 1, got ${bank.revision}`);
  const ids = new Set<string>();
  for (const q of bank.questions) {
    if (!ID.test(q.id)) f.error('bank', c.number, q.id, `question id '${q.id}' must be kebab-case (lower-case words joined by '-')`);
    if (ids.has(q.id)) f.error('bank', c.number, q.id, `two questions have the id '${q.id}': attempts record ids, so they must be unique`);
    ids.add(q.id);
    if (!(Number.isInteger(q.since) && q.since >= 1 && q.since <= bank.revision)) f.error('bank', c.number, q.id, `question ${q.id} has since ${q.since}: it must be from 1 to the bank's revision ${bank.revision}`);
    if (q.retired !== undefined && !(Number.isInteger(q.retired) && q.retired > q.since)) f.error('bank', c.number, q.id, `question ${q.id} is retired at ${q.retired}, not after it was added (${q.since})`);
  }
  const live = eligibleQuestions(bank, bank.revision);
  const need = c.knowledgeCheck!.questions;
  if (live.length < need) f.error('bank', c.number, where, `the bank has ${live.length} questions in use, fewer than the ${need} an attempt draws`);
  if (c.status === 'complete') {
    if (live.length < MIN_BANK) f.error('bank', c.number, where, `the bank has ${live.length} questions in use; a complete chapter needs at least ${MIN_BANK}`);
    const numeric = live.filter((q) => q.kind === 'numeric').length;
    if (numeric < Math.ceil(MIN_NUMERIC_SHARE * live.length)) f.error('bank', c.number, where, `${numeric} of ${live.length} questions are numeric; at least a third must be`);
  }
  for (const q of bank.questions) checkQuestion(q, c, f, opts.seeds);
}
