/**
 * `pnpm grade`, the student's command, run as a process of its own: its exit
 * codes (0 passed, 1 failed, 2 could not grade), the report it prints, the
 * rubric it writes, and --typecheck, which reports type errors as a note and
 * a flag without changing the score.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { EXERCISES_DIR, GRADER_DIR, SOLUTIONS_DIR } from '../src/paths.ts';
import { validateRubric, type Rubric } from '../src/rubric.ts';

const CLI = join(GRADER_DIR, 'src', 'cli', 'grade.ts');
const TSX = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
const EX01 = 'ex01-allreduce-mean';
const TYPE_ERROR = join(import.meta.dirname, 'fixtures', 'corpus', 'type-error', EX01);
const out = mkdtempSync(join(tmpdir(), 'dtlab-grade-cli-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));

/** Runs `pnpm grade ...args` (node with tsx's loader, no wrapper process); never throws on a non-zero exit. */
function grade(...args: string[]) {
  return execa(process.execPath, ['--import', TSX, CLI, ...args], { reject: false, env: { ...process.env, NO_COLOR: '1' } });
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
});
