/**
 * `pnpm quiz N`: chapter N's knowledge check. Ten questions drawn from the
 * chapter's bank by a fresh seed (or `--seed`), asked in the terminal with
 * @inquirer/select and @inquirer/input; after each answer, right or wrong
 * and why; at the end the score and whether it passed. Every attempt is
 * recorded in .course/quiz-N.json of the student's repository.
 *
 *   pnpm quiz N [--seed S] [--dir DIR]            ask in the terminal
 *   pnpm quiz N --questions FILE [--seed S]       write the questions to a file to fill in
 *   pnpm quiz N --answers FILE [--seed S]         grade the answers in FILE (format: src/answers-file.ts)
 *
 * Exit code: 0 passed, 1 not passed, 2 the command could not run (or a
 * malformed answer in --answers mode, which records nothing), 130 stopped.
 */
import { randomInt } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { relative } from 'node:path';
import input from '@inquirer/input';
import select from '@inquirer/select';
import { answerHint, formatQuestionsFile, readAnswersFile } from '../answers-file.ts';
import { drawQuiz, eligibleQuestions, type DrawnQuestion } from '../draw.ts';
import { AnswersFileError } from '../errors.ts';
import { gradeAnswer, type AnswerGrade } from '../grade-answer.ts';
import type { AttemptResult } from '../grade-attempt.ts';
import { chapterOf, loadCourse, type Chapter } from '../manifest.ts';
import { loadBank } from '../modules.ts';
import { attemptFile } from '../paths.ts';
import { QuizSession } from '../quiz-session.ts';
import { colors as c, parse, runCli, studentRoot, UsageError } from './common.ts';

const USAGE = 'usage: pnpm quiz N [--seed S] [--dir DIR] | pnpm quiz N --questions FILE | pnpm quiz N --answers FILE';

function readSeed(text: string | undefined): number | null {
  if (text === undefined) return null;
  if (!/^\d+$/.test(text) || Number(text) > 0xffffffff) throw new UsageError(`--seed must be a whole number from 0 to 4294967295, got '${text}'\n${USAGE}`);
  return Number(text);
}

function showQuestion(d: DrawnQuestion, total: number): void {
  console.log(`\n${c.bold(`Question ${d.index + 1} of ${total}`)} ${c.dim(`· ${d.question.topic}`)}`);
  console.log(d.presented.prompt);
}

function showGrade(g: Exclude<AnswerGrade, { status: 'malformed' }>): void {
  console.log(g.status === 'correct' ? c.green(c.bold('✓ Right.')) : c.red(c.bold('✗ Wrong.')));
  console.log(c.dim(g.feedback));
}

function showResult(r: AttemptResult, chapter: Chapter, file: string, root: string): void {
  const pct = Math.round((100 * r.score) / r.maxScore);
  const verdict = r.passed ? c.green(c.bold('passed')) : c.red(c.bold('not passed'));
  console.log(`\n${c.bold(`Score: ${r.score}/${r.maxScore} (${pct}%)`)}: ${verdict} (${chapter.knowledgeCheck!.passPercent}% to pass).`);
  console.log(`Recorded in ${relative(root, file) || file}; \`pnpm course\` shows your best score.${r.passed ? '' : ` Reread course/${chapter.reading} and try again: pnpm quiz ${chapter.number}`}`);
}

async function interactive(session: QuizSession, chapter: Chapter, root: string): Promise<number> {
  const total = session.drawn.length;
  for (const d of session.drawn) {
    showQuestion(d, total);
    let text: string;
    try {
      if (d.presented.kind === 'choice') {
        text = await select({ message: 'Your answer', choices: d.presented.options.map((o) => ({ name: `(${o.label}) ${o.text}`, value: o.label })) });
      } else {
        const p = d.presented;
        // A malformed answer is refused by validate and asked again in place: it is never recorded and costs nothing.
        text = await input({ message: `Your answer (${answerHint(d)})`, validate: (t) => { const g = gradeAnswer(p, t); return g.status === 'malformed' ? g.reason : true; } });
      }
    } catch (e) {
      if ((e as Error).name === 'ExitPromptError') {
        const answered = session.attempt.questions.filter((q) => q.answer !== undefined).length;
        console.log(`\nStopped after ${answered} of ${total} answers; the attempt is recorded as unfinished in ${relative(root, session.file)}.`);
      }
      throw e;
    }
    const g = gradeAnswer(d.presented, text);
    if (g.status === 'malformed') throw new Error(`BUG: a validated answer came back malformed: ${g.reason}`);
    session.answer(d.index, text);
    showGrade(g);
  }
  const r = session.result();
  showResult(r, chapter, session.file, root);
  return r.passed ? 0 : 1;
}

async function fromFile(file: string, seedArg: number | null, chapter: Chapter, root: string, start: (seed: number) => Promise<QuizSession>, preview: (seed: number) => DrawnQuestion[]): Promise<number> {
  const answers = readAnswersFile(file);
  if (answers.seed !== null && seedArg !== null && answers.seed !== seedArg) throw new AnswersFileError(file, null, `the file's seed ${answers.seed} is not --seed ${seedArg}: give one of them`);
  const seed = answers.seed ?? seedArg;
  if (seed === null) throw new AnswersFileError(file, null, `no seed: add a line 'seed: N' (pnpm quiz ${chapter.number} --questions FILE writes one) or pass --seed N`);
  const drawn = preview(seed);
  const extra = [...answers.answers.keys()].filter((n) => n < 1 || n > drawn.length);
  const problems = extra.map((n) => `answer ${n}: there are only questions 1 to ${drawn.length}`);
  for (const d of drawn) {
    const text = answers.answers.get(d.index + 1);
    if (text === undefined || text === '') problems.push(`answer ${d.index + 1}: missing (${answerHint(d)})`);
    else {
      const g = gradeAnswer(d.presented, text);
      if (g.status === 'malformed') problems.push(`answer ${d.index + 1}: ${g.reason}`);
    }
  }
  if (problems.length) {
    console.error(`${file}: ${problems.length} answer(s) could not be graded, so nothing was recorded (a malformed answer costs no attempt):`);
    for (const p of problems) console.error(`  - ${p}`);
    console.error(`Fix them and run again: pnpm quiz ${chapter.number} --answers ${file}`);
    return 2;
  }
  const session = await start(seed);
  if (session.repeatedSeed) console.log(c.yellow(`note: an earlier attempt used seed ${seed}; this one is recorded but does not count towards your best score.`));
  for (const d of session.drawn) {
    const text = answers.answers.get(d.index + 1)!;
    showQuestion(d, session.drawn.length);
    console.log(`${c.bold('Your answer:')} ${text}`);
    session.answer(d.index, text);
    showGrade(gradeAnswer(d.presented, text) as Exclude<AnswerGrade, { status: 'malformed' }>);
  }
  const r = session.result();
  showResult(r, chapter, session.file, root);
  return r.passed ? 0 : 1;
}

async function main(): Promise<number> {
  const { values, positionals } = parse(process.argv.slice(2), { seed: { type: 'string' }, dir: { type: 'string' }, answers: { type: 'string' }, questions: { type: 'string' } }, USAGE);
  if (positionals.length !== 1) throw new UsageError(USAGE);
  if (values.answers && values.questions) throw new UsageError(`--answers and --questions go in separate runs: write the questions, fill them in, then grade them\n${USAGE}`);
  const root = studentRoot(values.dir);
  const course = loadCourse();
  const chapter = chapterOf(course, positionals[0]!);
  const bank = await loadBank(course, chapter);
  const kc = chapter.knowledgeCheck!;
  const seedArg = readSeed(values.seed);
  const file = attemptFile(root, chapter.number);
  const preview = (seed: number) => drawQuiz(bank, seed, { count: kc.questions });
  const start = async (seed: number) => {
    const s = new QuizSession(file, chapter, bank, seed, values.answers ? 'answers-file' : 'interactive');
    if (s.movedAside) console.log(c.yellow(`note: ${relative(root, file)} could not be read, so it was moved to ${relative(root, s.movedAside)} and a new one started.`));
    return s;
  };
  if (values.questions) {
    const seed = seedArg ?? randomInt(0, 2 ** 32);
    writeFileSync(values.questions, formatQuestionsFile(chapter.title, chapter.number, seed, preview(seed)));
    console.log(`Wrote the ${kc.questions} questions of an attempt with seed ${seed} to ${values.questions}. Fill in the answers, then: pnpm quiz ${chapter.number} --answers ${values.questions}`);
    return 0;
  }
  if (values.answers) return fromFile(values.answers, seedArg, chapter, root, start, preview);
  if (!process.stdin.isTTY || !process.stdout.isTTY) throw new UsageError(`pnpm quiz asks in a terminal, and this is not one. To answer in a file instead: pnpm quiz ${chapter.number} --questions q.txt, fill it in, then pnpm quiz ${chapter.number} --answers q.txt`);
  const seed = seedArg ?? randomInt(0, 2 ** 32);
  console.log(c.bold(`Knowledge check · chapter ${chapter.number}: ${chapter.title}`));
  console.log(`${kc.questions} questions from a bank of ${eligibleQuestions(bank, bank.revision).length}; ${kc.passPercent}% to pass. Seed ${seed}. Every answer is recorded in ${relative(root, file)}.`);
  console.log(c.dim('Numbers: type the value, with or without its unit (12.5 or 12.5 GB). Choices: arrow keys, then Enter. Ctrl-C stops.'));
  const session = await start(seed);
  if (session.repeatedSeed) console.log(c.yellow(`note: an earlier attempt used seed ${seed}; this one will not count towards your best score.`));
  return interactive(session, chapter, root);
}

await runCli(main);
