/**
 * The numeric grader: tolerances, units (with conversion within a
 * dimension), and malformed answers, which are refused with a reason
 * instead of being graded.
 */
import { describe, expect, it } from 'vitest';
import { formatNumber, gradeAnswer, parseNumericAnswer, withinTolerance, type NumericFormat, type NumericVariant } from '../src/index.ts';

const GB: NumericFormat = { unit: 'GB', tolerance: { relative: 0.01 } };
const exact: NumericFormat = { unit: null, tolerance: { absolute: 0 }, countWords: ['ranks'] };

function q(answer: number, format: NumericFormat, misconceptions: NumericVariant['misconceptions'] = []): NumericVariant {
  return { kind: 'numeric', prompt: 'How much?', answer, format, explanation: 'Because.', misconceptions };
}

describe('tolerance', () => {
  it('accepts within the relative tolerance and refuses beyond it', () => {
    expect(withinTolerance(12.62, 12.5, { relative: 0.01 })).toBe(true);
    expect(withinTolerance(12.37, 12.5, { relative: 0.01 })).toBe(false);
    expect(withinTolerance(12.63, 12.5, { relative: 0.01 })).toBe(false);
  });
  it('asks for the exact value with an absolute tolerance of 0', () => {
    expect(withinTolerance(14, 14, { absolute: 0 })).toBe(true);
    expect(withinTolerance(14.000001, 14, { absolute: 0 })).toBe(false);
    expect(withinTolerance(13, 14, { absolute: 0 })).toBe(false);
  });
  it('accepts every value formatNumber shows, for answers of any size', () => {
    for (const x of [2133.333333, 8.173056, 0.56875, 1 / 3, 1.2e-7, 4.2e16, 293.125]) expect(withinTolerance(Number(formatNumber(x)), x, { relative: 1e-4 })).toBe(true);
  });
});

describe('units', () => {
  it('takes a bare number in the asked unit, the unit itself, and other units of its dimension converted', () => {
    expect(parseNumericAnswer('12.5', GB)).toEqual({ ok: true, value: 12.5 });
    expect(parseNumericAnswer('12.5 GB', GB)).toEqual({ ok: true, value: 12.5 });
    expect(parseNumericAnswer('12.5GB', GB)).toEqual({ ok: true, value: 12.5 });
    expect(parseNumericAnswer('1.25e4 MB', GB)).toEqual({ ok: true, value: 12.5, convertedFrom: 'MB' });
    expect(parseNumericAnswer('12500000000 bytes', GB)).toEqual({ ok: true, value: 12.5, convertedFrom: 'B' });
    expect(parseNumericAnswer('250 us', { unit: 'ms', tolerance: { relative: 0.01 } })).toEqual({ ok: true, value: 0.25, convertedFrom: 'µs' });
  });
  it('grades a converted answer by its value: 12.5 MB is not 12.5 GB', () => {
    const p = q(12.5, GB);
    expect(gradeAnswer(p, '12500 MB').status).toBe('correct');
    const g = gradeAnswer(p, '12.5 MB');
    expect(g.status).toBe('wrong');
    if (g.status === 'wrong') expect(g.feedback).toMatch(/12\.5 MB is 0\.0125 GB/);
  });
  it('refuses a unit of another dimension, with what it asks for', () => {
    const r = parseNumericAnswer('12.5 ms', GB);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.reason).toMatch(/is a time, but this asks for a size in bytes in GB/);
    expect(gradeAnswer(q(12.5, GB), '12.5 ms').status).toBe('malformed');
  });
  it('refuses an unknown unit, and a unit on a plain number', () => {
    const r = parseNumericAnswer('12.5 gigs', GB);
    expect(!r.ok && r.reason).toMatch(/unknown unit 'gigs'.*GB.*MiB/);
    const s = parseNumericAnswer('4 GB', exact);
    expect(!s.ok && s.reason).toMatch(/plain number/);
    expect(parseNumericAnswer('4 ranks', exact)).toEqual({ ok: true, value: 4 });
    expect(parseNumericAnswer('4x', exact)).toEqual({ ok: true, value: 4 });
  });
});

describe('malformed answers', () => {
  it('names the problem: empty, not a number, a comma, division by zero', () => {
    for (const [text, reason] of [
      ['', /no answer/],
      ['twelve', /not a number/],
      ['12,5', /comma/],
      ['1/0', /divides by zero/],
      ['1e999', /not a finite number/],
    ] as const) {
      const r = parseNumericAnswer(text, GB);
      expect(r.ok, text).toBe(false);
      if (!r.ok) expect(r.reason, text).toMatch(reason);
    }
  });
  it('reads fractions and a leading ≈', () => {
    expect(parseNumericAnswer('3/4', exact)).toEqual({ ok: true, value: 0.75 });
    expect(parseNumericAnswer('≈ 12.5 GB', GB)).toEqual({ ok: true, value: 12.5 });
  });
  it('is never graded right or wrong', () => {
    expect(gradeAnswer(q(14, exact), 'fourteen')).toEqual({ status: 'malformed', reason: "'fourteen' is not a number: type a plain number" });
  });
});

describe('feedback', () => {
  it('says why when a wrong answer matches a misconception', () => {
    const g = gradeAnswer(q(150, { unit: 'MB', tolerance: { relative: 0.01 } }, [{ value: 300, why: 'That is the naive exchange.' }]), '300');
    expect(g.status).toBe('wrong');
    if (g.status === 'wrong') expect(g.feedback).toMatch(/You answered 300 MB; the answer is 150 MB \(within 1%\)\.\nThat is the naive exchange\./);
  });
});
