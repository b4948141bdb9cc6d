/**
 * The pipeline model against the formulas: both schedules do every forward
 * and backward once, in dependency order; their bubble, read from the
 * virtual device, is within a few per cent of (p-1)/(m+p-1) (the backward's
 * weight-gradient sum makes t_b a little more than 2·t_f, which the formula
 * does not see); GPipe keeps m activations at its peak and 1F1B p - s.
 */
import { describe, expect, it } from 'vitest';
import { runPipeline, scheduleOrder } from '../src/model/pipeline.ts';

describe('the pipeline model', () => {
  it('1F1B on 4 stages and 6 micro-batches: stage 0 warms up with 3 forwards, the last stage alternates from the start', () => {
    const show = (o: ['F' | 'B', number][]) => o.map(([f, i]) => `${f}${i}`).join(' ');
    expect(show(scheduleOrder('1f1b', 4, 0, 6))).toBe('F0 F1 F2 F3 B0 F4 B1 F5 B2 B3 B4 B5');
    expect(show(scheduleOrder('1f1b', 4, 3, 6))).toBe('F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5');
    expect(show(scheduleOrder('gpipe', 2, 1, 3))).toBe('F0 F1 F2 B2 B1 B0');
    for (const s of [0, 1, 2, 3]) expect(scheduleOrder('1f1b', 4, s, 2).sort().map(String)).toEqual(scheduleOrder('gpipe', 4, s, 2).sort().map(String));
  });

  it.each([
    ['gpipe', 4, 8],
    ['1f1b', 4, 8],
    ['gpipe', 2, 1],
    ['1f1b', 3, 5],
  ] as const)('%s with p = %i, m = %i: the bubble is (p-1)/(m+p-1), the peak activations as the schedule says', async (schedule, p, m) => {
    const run = await runPipeline(schedule, p, m);
    expect(Math.abs(run.bubble - run.bubbleFormula)).toBeLessThan(0.03);
    for (const s of run.stages) {
      expect(s.peakActivations).toBe(s.peakFormula);
      expect(s.slices.filter((x) => x.kind === 'forward')).toHaveLength(m);
      expect(s.slices.filter((x) => x.kind === 'backward')).toHaveLength(m);
      expect(s.computeUs + s.idleUs).toBeCloseTo(s.vtUs, 6);
    }
  });
});
