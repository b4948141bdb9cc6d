/**
 * The answers file of `pnpm quiz N --answers FILE`, for tests and for
 * students who prefer an editor. `pnpm quiz N --questions FILE` writes one
 * to fill in. The format, line by line:
 *
 *     # a comment (the questions and their options are written as comments)
 *     seed: 123456        the attempt's seed (or pass --seed)
 *     1: 12.5 GB          the answer to question 1
 *     2: b                a letter for a multiple-choice question
 *
 * Blank lines and lines starting with '#' are ignored; every question needs
 * an answer line.
 */
import { readBounded } from './attempt.ts';
import type { DrawnQuestion } from './draw.ts';
import { AnswersFileError } from './errors.ts';
import { describeFormat, describeTolerance } from './numeric-answer.ts';

/** What an answers file holds. */
export interface AnswersFile {
  seed: number | null;
  /** Answers by question number (1-based). */
  answers: Map<number, string>;
}

/** The largest answers file read. */
export const MAX_ANSWERS_FILE_BYTES = 256 * 1024;

/** Reads the answers file `file`; throws AnswersFileError naming the line. */
export function readAnswersFile(file: string): AnswersFile {
  let text: string;
  try {
    const r = readBounded(file, MAX_ANSWERS_FILE_BYTES);
    if ('tooLarge' in r) throw new AnswersFileError(file, null, `larger than ${MAX_ANSWERS_FILE_BYTES} bytes; an answers file is a few lines`);
    text = r.text;
  } catch (e) {
    if (e instanceof AnswersFileError) throw e;
    throw new AnswersFileError(file, null, `cannot be read: ${(e as Error).message}`);
  }
  const out: AnswersFile = { seed: null, answers: new Map() };
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    const seed = /^seed\s*:\s*(.*)$/i.exec(line);
    if (seed) {
      if (!/^\d+$/.test(seed[1]!.trim()) || Number(seed[1]) > 0xffffffff) throw new AnswersFileError(file, i + 1, `the seed must be a whole number from 0 to 4294967295, got '${seed[1]!.trim()}'`);
      if (out.seed !== null) throw new AnswersFileError(file, i + 1, 'a second seed line');
      out.seed = Number(seed[1]);
      return;
    }
    const ans = /^(\d+)\s*[:.)]\s?(.*)$/.exec(line);
    if (!ans) throw new AnswersFileError(file, i + 1, `'${line}' is neither 'seed: N' nor an answer 'N: answer'`);
    const n = Number(ans[1]);
    if (out.answers.has(n)) throw new AnswersFileError(file, i + 1, `a second answer for question ${n}`);
    out.answers.set(n, ans[2]!.trim());
  });
  return out;
}

/** How a question says what to type: "a letter, a to d", "a number in GB, within 1%". */
export function answerHint(d: DrawnQuestion): string {
  const p = d.presented;
  if (p.kind === 'choice') return `a letter, ${p.options[0]!.label} to ${p.options.at(-1)!.label}`;
  return `${describeFormat(p.format)}, ${describeTolerance(p.format)}`;
}

/** A template to fill in: the questions as comments, an empty answer line each. */
export function formatQuestionsFile(title: string, chapter: number, seed: number, drawn: DrawnQuestion[]): string {
  const out = [`# dtlab knowledge check, chapter ${chapter}: ${title}`, `# Write each answer after its number, then run: pnpm quiz ${chapter} --answers <this file>`, '# Lines starting with # are ignored. Keep the seed line: it fixes the questions.', `seed: ${seed}`, ''];
  for (const d of drawn) {
    const wrap = (s: string) => s.split('\n').map((l) => `#    ${l}`);
    out.push(`# ${d.index + 1}. ${d.question.topic}`, ...wrap(d.presented.prompt));
    if (d.presented.kind === 'choice') for (const o of d.presented.options) out.push(`#    (${o.label}) ${o.text}`);
    out.push(`#    Answer: ${answerHint(d)}.`, `${d.index + 1}: `, '');
  }
  return out.join('\n');
}
