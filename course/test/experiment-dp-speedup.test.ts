/**
 * Chapter 5's experiment: the speedup of a communication-bound data-parallel
 * job on 1 to 16 ranks. Each row's all-reduce, measured on the virtual
 * device, must be the ring's closed form, and the measured speedup the
 * prediction N·C/(C + A(N)) from one rank's compute; the right choice is
 * the only one that holds.
 */
import { describe, expect, it } from 'vitest';
import { estimateTime } from '@dtlab/collectives';
import { DEFAULT_COST } from '@dtlab/runtime';
import speedup from '../chapters/05-profiling-and-scaling/experiments/dp-speedup-communication-bound.ts';
import { judgePrediction, runExperiment } from '../src/index.ts';

/** Gradient bytes of the experiment's 32-64-64-8 MLP: 6,792 float32 parameters. */
const GRADIENT_BYTES = 4 * (32 * 64 + 64 + 64 * 64 + 64 + 64 * 8 + 8);

describe('dp-speedup-communication-bound', () => {
  it('measures the ring all-reduce and the speedup the α-β closed form predicts, on 1 to 16 ranks', async () => {
    const run = await runExperiment(speedup, { kind: 'choice', option: 'c' });
    expect(run.rows.map((r) => r.ranks)).toEqual([1, 2, 4, 8, 16]);
    const one = run.rows[0]!;
    for (const r of run.rows) {
      const n = r.ranks!;
      const ring = estimateTime('allReduce', 'ring', GRADIENT_BYTES, n, DEFAULT_COST, { elementBytes: 4 });
      // Every rank computes the same step whatever N is; only the all-reduce changes.
      expect(r.computeUs).toBeCloseTo(one.computeUs!, 6);
      expect(r.commUs).toBeCloseTo(ring, 6);
      expect(r.predicted).toBeCloseTo((n * one.computeUs!) / (one.computeUs! + ring), 9);
      expect(r.measured).toBeCloseTo(r.predicted!, 6);
      expect(r.efficiency).toBeCloseTo(r.measured! / n, 12);
    }
    // Each added rank still helps, by less each time: the efficiency falls at every step.
    for (let i = 1; i < run.rows.length; i++) {
      expect(run.rows[i]!.measured).toBeGreaterThan(run.rows[i - 1]!.measured!);
      expect(run.rows[i]!.efficiency).toBeLessThan(run.rows[i - 1]!.efficiency!);
    }
    expect(run.verdict.held).toBe(true);
    expect(speedup.prediction.kind === 'choice' && speedup.prediction.options.filter((o) => o.holds(run.rows)).map((o) => o.id)).toEqual(['c']);
    expect(judgePrediction(speedup.prediction, { kind: 'choice', option: 'a' }, run.rows).held).toBe(false);
  }, 120_000);
});
