/**
 * Grading one answer to one presented question, with the feedback shown
 * after it: right or wrong, and why. A malformed answer (not a number, a
 * unit of the wrong kind, a letter that is not an option) is neither: it is
 * reported with what to type, and the question is asked again.
 */
import { describeTolerance, formatQuantity, parseNumericAnswer, withinTolerance } from './numeric-answer.ts';
import type { Presented } from './draw.ts';

/** The outcome of one answer. */
export type AnswerGrade =
  | { status: 'malformed'; reason: string }
  | {
      status: 'correct' | 'wrong';
      /** The right answer as shown: "12.5 GB" or "(c) ...". */
      expected: string;
      /** Why: for a wrong answer, the misconception it matches if any, then how the answer comes about. */
      feedback: string;
    };

/** The letter typed for a choice, without "(b)" or "b)" decoration; null if it is none. */
function readLetter(text: string): string | null {
  const m = /^\(?\s*([a-z])\s*\)?\.?$/i.exec(text.trim());
  return m ? m[1]!.toLowerCase() : null;
}

/** The right answer of `p` as shown: "12.5 GB" or "(c) the option's text". */
export function expectedAnswer(p: Presented): string {
  if (p.kind === 'numeric') return formatQuantity(p.answer, p.format);
  const right = p.options.find((o) => o.correct)!;
  return `(${right.label}) ${right.text}`;
}

/** Grades `raw` (what the student typed or chose) against `p`. */
export function gradeAnswer(p: Presented, raw: string): AnswerGrade {
  if (p.kind === 'choice') {
    const letters = p.options.map((o) => o.label);
    const letter = readLetter(raw);
    const chosen = letter === null ? undefined : p.options.find((o) => o.label === letter);
    if (!chosen) return { status: 'malformed', reason: `'${raw.trim()}' is not one of the options: answer with ${letters.slice(0, -1).join(', ')} or ${letters.at(-1)}` };
    const right = p.options.find((o) => o.correct)!;
    const expected = expectedAnswer(p);
    if (chosen.correct) return { status: 'correct', expected, feedback: `${right.why}\n${p.explanation}` };
    return { status: 'wrong', expected, feedback: `You chose (${chosen.label}). ${chosen.why}\nThe answer is ${expected}. ${right.why}\n${p.explanation}` };
  }
  const parsed = parseNumericAnswer(raw, p.format);
  if (!parsed.ok) return { status: 'malformed', reason: parsed.reason };
  const expected = expectedAnswer(p);
  const given = formatQuantity(parsed.value, p.format);
  const converted = parsed.convertedFrom ? ` (${raw.trim()} is ${given})` : '';
  if (withinTolerance(parsed.value, p.answer, p.format.tolerance)) return { status: 'correct', expected, feedback: `${expected}${converted}, ${describeTolerance(p.format)}.\n${p.explanation}` };
  const mistake = p.misconceptions.find((m) => withinTolerance(parsed.value, m.value, p.format.tolerance));
  const lead = `You answered ${given}${converted}; the answer is ${expected} (${describeTolerance(p.format)}).`;
  return { status: 'wrong', expected, feedback: `${lead}${mistake ? `\n${mistake.why}` : ''}\n${p.explanation}` };
}
