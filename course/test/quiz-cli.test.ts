/**
 * `pnpm quiz N --answers FILE`, end to end through the command line: the
 * questions file it writes, a prepared file of right and wrong answers
 * graded with feedback, the attempt recorded and regraded to the same
 * score, and malformed answers that record nothing.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import bank2 from '../chapters/02-sharding/bank.ts';
import { drawQuiz, formatNumber, regradeAttempt, type DrawnQuestion } from '../src/index.ts';
import { execa } from 'execa';
import { cleanup, cli, scratch, scratchRepo } from './helpers.ts';

afterAll(cleanup);

function right(d: DrawnQuestion): string {
  return d.presented.kind === 'choice' ? d.presented.options.find((o) => o.correct)!.label : `${formatNumber(d.presented.answer)}${d.presented.format.unit ? ` ${d.presented.format.unit}` : ''}`;
}

describe('pnpm quiz 2 --answers', () => {
  it('writes a questions file, then grades it filled in: right, wrong and why, the score, and the attempt', async () => {
    const dir = scratch();
    const q = join(dir, 'answers.txt');
    const wrote = await cli('quiz', ['2', '--questions', q, '--seed', '4242', '--dir', dir]);
    expect(wrote.exitCode).toBe(0);
    const template = readFileSync(q, 'utf8');
    expect(template).toMatch(/^seed: 4242$/m);
    expect(template.match(/^\d+: $/gm)).toHaveLength(10);
    const drawn = drawQuiz(bank2, 4242, { count: 10 });
    // Right answers but for questions 3 and 7; a numeric wrong one uses a misconception where there is one.
    const wrongAt = new Set([2, 6]);
    const filled = template.replace(/^(\d+): $/gm, (_, n: string) => {
      const d = drawn[Number(n) - 1]!;
      if (!wrongAt.has(d.index)) return `${n}: ${right(d)}`;
      const p = d.presented;
      return `${n}: ${p.kind === 'choice' ? p.options.find((o) => !o.correct)!.label : formatNumber(p.misconceptions[0]?.value ?? p.answer * 2 + 1)}`;
    });
    writeFileSync(q, filled);
    const r = await cli('quiz', ['2', '--answers', q, '--dir', dir]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout.match(/✓ Right\./g)).toHaveLength(8);
    expect(r.stdout.match(/✗ Wrong\./g)).toHaveLength(2);
    expect(r.stdout).toMatch(/Score: 8\/10 \(80%\): passed/);
    const attemptFile = join(dir, '.course', 'quiz-2.json');
    const saved = JSON.parse(readFileSync(attemptFile, 'utf8'));
    expect(saved.attempts).toHaveLength(1);
    expect(saved.attempts[0]).toMatchObject({ seed: 4242, mode: 'answers-file' });
    expect(saved.attempts[0].questions.map((x: { id: string }) => x.id)).toEqual(drawn.map((d) => d.question.id));
    expect(JSON.stringify(saved)).not.toMatch(/score/);
    const regraded = await regradeAttempt(attemptFile);
    expect(regraded).toMatchObject({ score: 8, maxScore: 10, passed: true });
  });

  it('reports malformed answers, records nothing and exits 2', async () => {
    const dir = scratch();
    const q = join(dir, 'a.txt');
    const drawn = drawQuiz(bank2, 99, { count: 10 });
    const numericAt = drawn.find((d) => d.presented.kind === 'numeric' && d.presented.format.unit !== null)!;
    const choiceAt = drawn.find((d) => d.presented.kind === 'choice')!;
    const lines = drawn.map((d) => {
      if (d === numericAt) return `${d.index + 1}: ${formatNumber((d.presented as { answer: number }).answer)} ms`;
      if (d === choiceAt) return `${d.index + 1}: z`;
      return `${d.index + 1}: ${right(d)}`;
    });
    const dropped = drawn.find((d) => d !== numericAt && d !== choiceAt)!;
    writeFileSync(q, `seed: 99\n${lines.filter((_, i) => i !== dropped.index).join('\n')}\n`);
    const r = await cli('quiz', ['2', '--answers', q, '--dir', dir]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(new RegExp(`answer ${numericAt.index + 1}: .* is a time, but this asks for a size in bytes`));
    expect(r.stderr).toMatch(new RegExp(`answer ${choiceAt.index + 1}: 'z' is not one of the options`));
    expect(r.stderr).toMatch(new RegExp(`answer ${dropped.index + 1}: missing`));
    expect(r.stderr).toMatch(/3 answer\(s\) could not be graded, so nothing was recorded/);
    expect(existsSync(join(dir, '.course', 'quiz-2.json'))).toBe(false);
  });

  it('needs a seed, refuses a chapter without a check, and explains how to answer without a terminal', async () => {
    const dir = scratch();
    const q = join(dir, 'a.txt');
    writeFileSync(q, '1: a\n');
    expect((await cli('quiz', ['1', '--answers', q, '--dir', dir])).stderr).toMatch(/no seed/);
    // A chapter still an outline has no knowledge check: made so in a scratch copy of the course.
    const root = scratchRepo();
    const manifest = join(root, 'course', 'course.json');
    const course = JSON.parse(readFileSync(manifest, 'utf8')) as { chapters: { status: string; knowledgeCheck?: unknown; experiments: unknown[] }[] };
    const fifth = course.chapters[4]!;
    fifth.status = 'outline';
    delete fifth.knowledgeCheck;
    writeFileSync(manifest, JSON.stringify(course, null, 2));
    const outline = await execa('node', ['--import', 'tsx', join(root, 'course', 'src', 'cli', 'quiz.ts'), '5', '--dir', dir], { cwd: root, reject: false, env: { NO_COLOR: '1' } });
    expect(outline.exitCode).toBe(2);
    expect(String(outline.stderr)).toMatch(/chapter 5 \(Profiling one worker, and scaling laws\) has no knowledge check yet/);
    const tty = await cli('quiz', ['1', '--dir', dir]);
    expect(tty.exitCode).toBe(2);
    expect(tty.stderr).toMatch(/--questions q\.txt, fill it in, then pnpm quiz 1 --answers q\.txt/);
  });
});
