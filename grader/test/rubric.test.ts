/**
 * Rubrics: the schema accepts what the grader writes and refuses what it
 * must not; files are written whole or not at all; Gradescope's shape.
 */
import { existsSync, mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RubricSchemaError, toGradescope, validateRubric, writeRubric, type Rubric } from '../src/rubric.ts';
import { schemaValidator } from '../src/validators.ts';

function sample(): Rubric {
  return {
    schemaVersion: 1,
    exercise: 'ex01-allreduce-mean',
    submission: { id: 'alice', path: '/tmp/alice', sha256: 'a'.repeat(64) },
    grader: { version: '0.1.0+abc', hiddenChecks: 'ran' },
    seed: 42,
    startedAt: new Date(0).toISOString(),
    durationMs: 1234,
    status: 'failed',
    score: 1,
    maxScore: 3,
    checks: [
      { id: 'policy', name: 'Static policy', visibility: 'public', score: 0, maxScore: 0, status: 'passed', message: 'ok', durationMs: 3 },
      { id: 'two-ranks', name: 'Two ranks', visibility: 'public', score: 1, maxScore: 1, status: 'passed', message: 'ok', durationMs: 10, comm: { messages: 4, bytes: 80, virtualTimeUs: 10 } },
      {
        id: 'seed-experiment',
        name: 'Seed experiment',
        visibility: 'hidden',
        score: 0,
        maxScore: 2,
        status: 'failed',
        message: 'rank 1: wrong',
        divergence: { rank: 1, index: [0, 2], expected: 0.5, actual: 'NaN', label: '0.weight' },
        durationMs: 20,
      },
    ],
  };
}

describe('the rubric schema', () => {
  it('accepts a complete rubric', () => {
    expect(() => validateRubric(sample())).not.toThrow();
  });
  it.each([
    ['a missing score', (r: any) => delete r.score],
    ['an unknown status', (r: any) => (r.status = 'ok')],
    ['a bad sha256', (r: any) => (r.submission.sha256 = 'xyz')],
    ['a negative check score', (r: any) => (r.checks[1].score = -1)],
    ['an unknown check field', (r: any) => (r.checks[1].extra = 1)],
    ['a date that is not a date', (r: any) => (r.startedAt = 'yesterday')],
  ])('refuses %s', (_what, spoil) => {
    const r = sample();
    spoil(r);
    expect(() => validateRubric(r)).toThrow(RubricSchemaError);
  });
});

describe('writing a rubric', () => {
  it('writes valid JSON atomically and leaves no temporary file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'dtlab-rubric-'));
    const file = join(dir, 'out', 'ex01.json');
    writeRubric(file, sample());
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual(sample());
    expect(readdirSync(join(dir, 'out'))).toEqual(['ex01.json']);
  });
  it('writes nothing when the rubric is invalid', () => {
    const dir = mkdtempSync(join(tmpdir(), 'dtlab-rubric-'));
    const bad = { ...sample(), score: -5 };
    expect(() => writeRubric(join(dir, 'ex01.json'), bad)).toThrow(RubricSchemaError);
    expect(existsSync(join(dir, 'ex01.json'))).toBe(false);
  });
});

describe('Gradescope format', () => {
  it('maps checks to tests, with hidden checks visible after publication', () => {
    const g = toGradescope(sample()) as { score: number; tests: { name: string; score: number; max_score: number; status: string; visibility: string }[] };
    expect(g.score).toBe(1);
    expect(g.tests.map((t) => [t.status, t.visibility, t.max_score])).toEqual([
      ['passed', 'visible', 0],
      ['passed', 'visible', 1],
      ['failed', 'after_published', 2],
    ]);
  });
});

describe('the schema validators kept as code', () => {
  it('accept and refuse the same rubrics whether compiled or loaded from their code', () => {
    const dir = mkdtempSync(join(tmpdir(), 'dtlab-validators-'));
    const compiled = schemaValidator('rubric.schema.json', { formats: true, codeDir: dir });
    expect(readdirSync(dir)).toHaveLength(1); // the code it kept
    const loaded = schemaValidator('rubric.schema.json', { formats: true, codeDir: dir });
    const cases: [string, unknown, boolean][] = [
      ['a valid rubric', sample(), true],
      ['a date that is not a date-time', { ...sample(), startedAt: 'yesterday' }, false],
      ['a score that is not a number', { ...sample(), score: 'three' }, false],
      ['an unknown field', { ...sample(), extra: 1 }, false],
    ];
    for (const [what, data, ok] of cases) {
      expect(compiled(data), `compiled: ${what}`).toBe(ok);
      expect(loaded(data), `loaded: ${what}`).toBe(ok);
      if (!ok) expect(loaded.errors?.map((e) => e.keyword)).toEqual(compiled.errors?.map((e) => e.keyword));
    }
  });
});
