/**
 * `pnpm course` for a scratch student folder: five chapters, exercises
 * passed from the last rubrics in .grades/, the knowledge check's best
 * score regraded from .course/, experiments counted from the notes, and
 * the next thing to do.
 */
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import bank1 from '../chapters/01-data-parallelism/bank.ts';
import { courseProgress, drawQuiz, formatNumber, loadCourse } from '../src/index.ts';
import { cleanup, cli, scratch, write } from './helpers.ts';

afterAll(cleanup);

/** A rubric as `pnpm grade` writes it (the fields the course reads, and the rest of its shape). */
function rubric(exercise: string, status: 'passed' | 'failed', score: number): string {
  return JSON.stringify({ schemaVersion: 1, exercise, submission: { id: 'local', path: '.', sha256: '0'.repeat(64) }, grader: { version: '0.1.0' }, seed: 1, startedAt: '2026-12-01T10:00:00.000Z', durationMs: 1000, status, score, maxScore: 10, checks: [] });
}

function quizFile(rightCount: number): string {
  const drawn = drawQuiz(bank1, 5, { count: 10 });
  const t = '2026-12-01T10:00:00.000Z';
  return JSON.stringify({
    schemaVersion: 1,
    chapter: 1,
    attempts: [{ seed: 5, bankRevision: bank1.revision, mode: 'interactive', startedAt: t, finishedAt: t, questions: drawn.map((d, i) => ({ id: d.question.id, variant: d.variant, answer: i < rightCount ? (d.presented.kind === 'choice' ? d.presented.options.find((o) => o.correct)!.label : formatNumber(d.presented.answer)) : (d.presented.kind === 'choice' ? d.presented.options.find((o) => !o.correct)!.label : '-1'), answeredAt: t })) }],
  });
}

describe('pnpm course', () => {
  it('shows five chapters for a student who has not started, and says to start with the first reading and experiment', async () => {
    const r = await cli('course', ['--dir', scratch()]);
    expect(r.exitCode, r.stderr).toBe(0);
    for (const title of ['1. Data parallelism and ring all-reduce', '2. Sharding the training state: ZeRO and FSDP', '3. Tensor parallelism', '4. Pipeline parallelism', '5. Profiling one worker, and scaling laws']) expect(r.stdout).toContain(title);
    expect(r.stdout).toMatch(/exercises\s+0\/5 passed\s+ex01 not graded\s+ex02 not graded\s+ex04 not graded\s+ex05 not graded\s+ex06 not graded/);
    expect(r.stdout).toMatch(/Next: Chapter 1: read course\/chapters\/01-data-parallelism\/README\.md, then predict and run an experiment: pnpm experiment ring-allreduce-ranks/);
  });

  it('shows rubrics, the best check score and recorded experiments, and points at the first unfinished exercise', async () => {
    const dir = scratch();
    write(join(dir, '.grades', 'ex01.json'), rubric('ex01-allreduce-mean', 'passed', 10));
    write(join(dir, '.grades', 'ex02.json'), rubric('ex02-ring-scatter-reduce', 'failed', 6));
    write(join(dir, '.course', 'quiz-1.json'), quizFile(7));
    write(join(dir, 'notes', 'experiments.md'), '# Experiment notes\n\n## ring-allreduce-ranks · 2026-12-01 10:00 UTC\n\ntext\n');
    const r = await cli('course', ['--dir', dir]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/exercises\s+1\/5 passed\s+ex01 10\/10 ✓\s+ex02 6\/10 failed\s+ex04 not graded/);
    expect(r.stdout).toMatch(/check\s+best 7\/10, not passed yet\s+\(1 attempt\)\s+pnpm quiz 1/);
    expect(r.stdout).toMatch(/experiments\s+1\/1 recorded\s+ring-allreduce-ranks ✓/);
    expect(r.stdout).toMatch(/Next: Chapter 1: finish ex02 \(Ring scatter-reduce\), last graded 6\/10 \(failed\): pnpm grade ex02/);
  });

  it('moves to the knowledge check, then to chapter 2, as things pass', async () => {
    const course = loadCourse();
    const dir = scratch();
    write(join(dir, '.grades', 'ex01.json'), rubric('ex01-allreduce-mean', 'passed', 10));
    write(join(dir, '.grades', 'ex02.json'), rubric('ex02-ring-scatter-reduce', 'passed', 10));
    write(join(dir, 'notes', 'experiments.md'), '## ring-allreduce-ranks · 2026-12-01 10:00 UTC\n');
    expect((await courseProgress(course, dir)).next).toMatch(/Chapter 1: start ex04 \(DDP from scratch\): read exercises\/ex04-ddp-from-scratch\/README\.md, run pnpm test ex04/);
    for (const ex of ['ex04-ddp-from-scratch', 'ex05-bucketed-overlap', 'ex06-gradient-accumulation']) write(join(dir, '.grades', `${ex.slice(0, 4)}.json`), rubric(ex, 'passed', 10));
    expect((await courseProgress(course, dir)).next).toMatch(/Chapter 1: take the knowledge check .*: pnpm quiz 1/);
    write(join(dir, '.course', 'quiz-1.json'), quizFile(9));
    const p = await courseProgress(course, dir);
    expect(p.chapters[0]!.complete).toBe(true);
    expect(p.chapters[0]!.quiz).toMatchObject({ score: 9, passed: true });
    expect(p.next).toMatch(/Chapter 2: .*pnpm experiment zero1-optimizer-memory/);
  });

  it('treats an unreadable rubric as not graded and an unreadable attempt file as such', async () => {
    const dir = scratch();
    write(join(dir, '.grades', 'ex01.json'), '{ not json');
    write(join(dir, '.course', 'quiz-1.json'), '[]');
    const p = await courseProgress(loadCourse(), dir);
    expect(p.chapters[0]!.exercises[0]!.status).toBe('not graded');
    expect(p.chapters[0]!.quiz!.status).toBe('invalid');
  });
});
