/**
 * `pnpm grade`, the student's command, run as a process of its own: its exit
 * codes (0 passed, 1 failed, 2 could not grade), the report it prints, the
 * rubric it writes, and --typecheck, which reports type errors as a note and
 * a flag without changing the score; the exercises listed by chapter; and
 * --watch, which grades again on every save and says what is next.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { EXERCISES_DIR, GRADER_DIR, SOLUTIONS_DIR } from '../src/paths.ts';
import { validateRubric, type Rubric } from '../src/rubric.ts';

// What `pnpm grade` runs (the root package.json's script).
const CLI = join(GRADER_DIR, 'bin', 'grade.cjs');
const EX01 = 'ex01-allreduce-mean';
const TYPE_ERROR = join(import.meta.dirname, 'fixtures', 'corpus', 'type-error', EX01);
const out = mkdtempSync(join(tmpdir(), 'dtlab-grade-cli-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));

/** Runs `pnpm grade ...args` (its script's command, no pnpm wrapper process); never throws on a non-zero exit. */
function grade(...args: string[]) {
  return execa(process.execPath, [CLI, ...args], { reject: false, env: { ...process.env, NO_COLOR: '1' } });
}

function rubricAt(file: string): Rubric {
  const r = JSON.parse(readFileSync(file, 'utf8')) as Rubric;
  validateRubric(r);
  return r;
}

describe('pnpm grade', () => {
  it('passes a correct submission: exit 0, a report with every check, a valid rubric where --out says', async () => {
    const file = join(out, 'solution.json');
    const res = await grade('ex01', '--submission', join(SOLUTIONS_DIR, EX01), '--out', file, '--seed', '7');
    expect(res.exitCode, res.stderr).toBe(0);
    const r = rubricAt(file);
    expect(r).toMatchObject({ exercise: EX01, status: 'passed', seed: 7 });
    expect(r.score).toBe(r.maxScore);
    for (const c of r.checks) expect(res.stdout).toContain(`PASS  ${c.id}`);
    expect(res.stdout).toContain(`score ${r.maxScore}/${r.maxScore} · passed`);
  }, 60_000);

  it('fails the starter: exit 1, the failing checks named, the rubric says failed', async () => {
    const file = join(out, 'starter.json');
    const res = await grade('ex01', '--submission', join(EXERCISES_DIR, EX01), '--out', file, '--seed', '7');
    expect(res.exitCode, res.stderr).toBe(1);
    const r = rubricAt(file);
    expect(r.status).toBe('failed');
    expect(r.score).toBeLessThan(r.maxScore);
    const failed = r.checks.filter((c) => c.status === 'failed');
    expect(failed.length).toBeGreaterThan(0);
    for (const c of failed) expect(res.stdout).toContain(`FAIL  ${c.id}`);
    expect(res.stdout).toMatch(/pnpm hint ex01/);
  }, 60_000);

  it('with --typecheck, reports type errors as a note and a flag and scores as without', async () => {
    const [plain, typed] = [join(out, 'plain.json'), join(out, 'typed.json')];
    const [a, b] = await Promise.all([
      grade('ex01', '--submission', TYPE_ERROR, '--out', plain, '--seed', '3'),
      grade('ex01', '--submission', TYPE_ERROR, '--out', typed, '--seed', '3', '--typecheck'),
    ]);
    expect(a.exitCode, a.stderr).toBe(0);
    expect(b.exitCode, b.stderr).toBe(0);
    const [ra, rb] = [rubricAt(plain), rubricAt(typed)];
    expect(rb.score).toBe(ra.score);
    expect(ra.flags ?? []).not.toContain('type-errors');
    expect(rb.flags).toContain('type-errors');
    const note = rb.notes?.find((n) => n.startsWith('type check'));
    expect(note).toMatch(/1 error/);
    expect(note).toMatch(/src\/allreduce-mean\.ts:\d+:\d+ TS\d+: /);
    expect(b.stdout).toContain(note!.split('\n')[1]!.trim());
  }, 60_000);

  it('grades a folder without src/ as failed, every check skipped and said so', async () => {
    const file = join(out, 'no-src.json');
    const res = await grade('ex01', '--submission', out, '--out', file);
    expect(res.exitCode, res.stderr).toBe(1);
    const r = rubricAt(file);
    expect(r.score).toBe(0);
    expect(res.stdout).toContain('has no src/ folder');
    const hidden = r.checks.filter((c) => c.visibility === 'hidden').length;
    expect(res.stdout).toContain(`hidden checks: 0 of ${hidden} ran (the others were skipped: see above)`);
  }, 60_000);

  it('refuses bad arguments with exit 2, the reason and the usage, and writes nothing', async () => {
    const cases: [string[], RegExp][] = [
      [['ex01', '--bogus'], /unknown option --bogus[\s\S]*usage: pnpm grade/],
      [['ex99'], /no exercise named 'ex99'\. Exercises: ex01-allreduce-mean/],
      [['ex01', 'ex02'], /grade one exercise at a time, got: ex01 ex02/],
      [['ex01', '--seed', '-1'], /--seed must be a non-negative integer, got -1/],
      [['ex01', '--format', 'csv'], /--format must be rubric, gradescope or junit, got csv/],
      [['ex01', '--submission', join(out, 'nowhere')], /--submission .*nowhere: no such folder/],
    ];
    for (const [args, message] of cases) {
      const file = join(out, 'refused.json');
      const res = await grade(...args, '--out', file);
      expect(res.exitCode, args.join(' ')).toBe(2);
      expect(res.stderr).toMatch(message);
      expect(() => readFileSync(file)).toThrow(/ENOENT/);
    }
  }, 60_000);

  it('lists the exercises by chapter of the course without an exercise', async () => {
    const res = await grade();
    expect(res.exitCode, res.stderr).toBe(0);
    const chapter1 = res.stdout.indexOf('1. Data parallelism');
    const chapter2 = res.stdout.indexOf('2. Sharding the training state');
    expect(chapter1).toBeGreaterThan(0);
    expect(chapter2).toBeGreaterThan(chapter1);
    // ex01 and ex02 under chapter 1, ex03 under chapter 2.
    expect(res.stdout.indexOf('ex01')).toBeGreaterThan(chapter1);
    expect(res.stdout.indexOf('ex02')).toBeLessThan(chapter2);
    expect(res.stdout.indexOf('ex03')).toBeGreaterThan(chapter2);
  }, 60_000);

  it('with --watch, grades the starter, grades again when the solution is saved over it, and says what is next', async () => {
    const work = mkdtempSync(join(tmpdir(), 'dtlab-grade-watch-'));
    cpSync(join(EXERCISES_DIR, EX01, 'src'), join(work, 'src'), { recursive: true });
    const file = join(out, 'watch.json');
    const child = execa(process.execPath, [CLI, 'ex01', '--watch', '--no-hidden', '--submission', work, '--out', file, '--seed', '3'], { reject: false, env: { ...process.env, NO_COLOR: '1' } });
    let seen = '';
    child.stdout!.on('data', (d: Buffer) => (seen += d.toString()));
    const until = async (pattern: RegExp, what: string) => {
      for (let t = 0; t < 600 && !pattern.test(seen); t++) await new Promise((r) => setTimeout(r, 100));
      if (!pattern.test(seen)) throw new Error(`--watch never printed ${what}; it printed:\n${seen}`);
    };
    try {
      await until(/watching .* for changes/, 'that it is watching');
      expect(seen).toContain('FAIL  ');
      expect(rubricAt(file).status).toBe('failed');
      seen = '';
      const entry = 'allreduce-mean.ts';
      writeFileSync(join(work, 'src', entry), readFileSync(join(SOLUTIONS_DIR, EX01, 'src', entry)));
      await until(/watching .* for changes/, 'a second report after the save');
      expect(seen).toMatch(/score (\d+)\/\1 · passed/);
      expect(seen).toContain('next: pnpm explain ex01 (name the failure mechanism, then read why the fix works); then pnpm grade ex02 (Ring scatter-reduce)');
      expect(rubricAt(file).status).toBe('passed');
    } finally {
      child.kill('SIGINT');
      const res = await child;
      rmSync(work, { recursive: true, force: true });
      expect(res.exitCode).toBe(0);
    }
  }, 120_000);
});
