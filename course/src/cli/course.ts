/**
 * `pnpm course`: the course's chapters in order, each with the student's
 * progress (exercises passed, the knowledge check's best score, experiments
 * recorded), and the one thing to do next.
 *
 *   pnpm course [--dir DIR]
 */
import { loadCourse } from '../manifest.ts';
import { courseProgress, type ChapterProgress } from '../progress.ts';
import { colors as c, parse, runCli, studentRoot, UsageError } from './common.ts';

const USAGE = 'usage: pnpm course [--dir DIR]';

function chapterLines(p: ChapterProgress): string[] {
  const ch = p.chapter;
  const mark = p.complete ? c.green('✓') : ch.status === 'outline' ? c.dim('·') : ' ';
  const head = `${mark} ${c.bold(`${ch.number}. ${ch.title}`)}${ch.status === 'outline' ? c.dim('  (outline: exercises, check and experiments come later)') : ''}`;
  const lines = [head, `    reading      course/${ch.reading}`];
  if (ch.exercises.length) {
    const passed = p.exercises.filter((e) => e.status === 'passed').length;
    const each = p.exercises.map((e) => {
      const name = e.id ?? e.folder;
      if (e.status === 'not graded') return c.dim(`${name} not graded`);
      const s = `${name} ${e.score ?? '?'}/${e.maxScore ?? '?'}`;
      return e.status === 'passed' ? c.green(`${s} ✓`) : c.yellow(`${s} ${e.status}`);
    });
    lines.push(`    exercises    ${passed}/${ch.exercises.length} passed   ${each.join('   ')}`);
  }
  if (p.quiz) {
    const q = p.quiz;
    const what = q.status === 'missing' || q.attempts === 0 ? c.dim('not taken') : q.status === 'invalid' ? c.red(`attempt file unreadable: ${q.problems[0]}`) : q.passed ? c.green(`best ${q.score}/${q.maxScore} ✓ passed`) : c.yellow(`best ${q.score}/${q.maxScore}, not passed yet`);
    lines.push(`    check        ${what}${q.attempts ? c.dim(`  (${q.attempts} attempt${q.attempts === 1 ? '' : 's'})`) : ''}   pnpm quiz ${ch.number}`);
  }
  if (ch.experiments.length) {
    const done = p.experiments.filter((e) => e.recorded > 0).length;
    lines.push(`    experiments  ${done}/${ch.experiments.length} recorded   ${p.experiments.map((e) => (e.recorded ? c.green(`${e.id} ✓`) : c.dim(e.id))).join('   ')}`);
  }
  return lines;
}

async function main(): Promise<number> {
  const { values, positionals } = parse(process.argv.slice(2), { dir: { type: 'string' } }, USAGE);
  if (positionals.length) throw new UsageError(USAGE);
  const course = loadCourse();
  const progress = await courseProgress(course, studentRoot(values.dir));
  console.log(`${c.bold(course.manifest.title)} ${c.dim(`· ${course.chapters.length} chapters`)}\n`);
  for (const p of progress.chapters) console.log(chapterLines(p).join('\n') + '\n');
  console.log(`${c.bold('Next:')} ${progress.next}`);
  return 0;
}

await runCli(main);
