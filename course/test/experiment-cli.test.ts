/**
 * `pnpm experiment`: the list, and a run of each chapter's experiment with
 * a prediction, in a scratch student folder: the measured rows against the
 * closed forms, the verdict, and the entry appended to notes/experiments.md.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { chunkBounds, estimateTime } from '@dtlab/collectives';
import { DEFAULT_COST } from '@dtlab/runtime';
import ring from '../chapters/01-data-parallelism/experiments/ring-allreduce-ranks.ts';
import zero from '../chapters/02-sharding/experiments/zero1-optimizer-memory.ts';
import tpdp from '../chapters/03-tensor-parallelism/experiments/tp-vs-dp-traffic.ts';
import { judgePrediction, recordedExperiments, runExperiment } from '../src/index.ts';
import { cleanup, cli, scratch } from './helpers.ts';

afterAll(cleanup);

describe('the experiments measure what the formulas say', () => {
  it('ring-allreduce-ranks: 2(N-1)/N·S bytes per rank and the estimateTime of the ring', async () => {
    const run = await runExperiment(ring, { kind: 'choice', option: 'c' });
    const S = 2 ** 20;
    expect(run.rows.map((r) => r.ranks)).toEqual([2, 4, 8]);
    for (const r of run.rows) {
      const n = r.ranks!;
      expect(r.bytesPerRank).toBe((2 * (n - 1) * S) / n);
      expect(r.messagesPerRank).toBe(2 * (n - 1));
      expect(r.virtualUs).toBeCloseTo(estimateTime('allReduce', 'ring', S, n, DEFAULT_COST, { elementBytes: 4 }), 6);
    }
    expect(run.verdict.held).toBe(true);
    expect(ring.prediction.kind === 'choice' && ring.prediction.options.filter((o) => o.holds(run.rows)).map((o) => o.id)).toEqual(['c']);
    expect(judgePrediction(ring.prediction, { kind: 'choice', option: 'a' }, run.rows).held).toBe(false);
  });

  it('zero1-optimizer-memory: 2·4·⌈P/N⌉ bytes of moments on the largest shard, parameters unchanged', async () => {
    const run = await runExperiment(zero, { kind: 'number', value: 83 });
    const P = 85259;
    for (const r of run.rows) {
      const largest = Math.max(...chunkBounds(P, r.ranks!).map((b) => b.end - b.start));
      expect(r.largestShard).toBe(largest);
      expect(r.optimizerKiB! * 1024).toBe(8 * largest);
      expect(r.parameterKiB! * 1024).toBe(4 * P);
    }
    expect(run.verdict.held).toBe(true); // 8·⌈85259/8⌉ bytes = 83.27 KiB, within 5% of 83
    expect(judgePrediction(zero.prediction, { kind: 'number', value: 666 }, run.rows).held).toBe(false);
  });
});

describe('the experiments of chapters 3 and 4', () => {
  it('tp-vs-dp-traffic: 2·2(N-1)/N·T·h against 2(N-1)/N·8h² bytes per rank, and estimateTime of each', async () => {
    const run = await runExperiment(tpdp, { kind: 'number', value: 4 });
    const [n, h] = [4, 128];
    for (const r of run.rows) {
      const t = r.tokens!;
      expect(r.tpKiB! * 1024).toBe(2 * ((2 * (n - 1)) / n) * t * h * 4);
      expect(r.dpKiB! * 1024).toBe(((2 * (n - 1)) / n) * 8 * h * h * 4);
      expect(r.ratio).toBeCloseTo((2 * t * h) / (8 * h * h), 12);
      expect(r.tpUs).toBeCloseTo(2 * estimateTime('allReduce', 'ring', t * h * 4, n, DEFAULT_COST, { elementBytes: 4 }), 6);
      expect(r.dpUs).toBeCloseTo(estimateTime('allReduce', 'ring', 8 * h * h * 4, n, DEFAULT_COST, { elementBytes: 4 }), 6);
    }
    expect(run.rows.find((r) => r.tokens === 4 * h)!.ratio).toBe(1);
    expect(run.verdict.held).toBe(true); // 2·2048·128 / 8·128² = 4
    expect(judgePrediction(tpdp.prediction, { kind: 'number', value: 0.5 }, run.rows).held).toBe(false);
  });
});

describe('pnpm experiment', () => {
  it('lists the experiments by chapter', async () => {
    const r = await cli('experiment', ['--dir', scratch()]);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toMatch(/ring-allreduce-ranks\s+chapter 1/);
    expect(r.stdout).toMatch(/zero1-optimizer-memory\s+chapter 2/);
  });

  it('runs an experiment with a prediction, prints the table and chart, and appends an entry to the notes', async () => {
    const dir = scratch();
    const r = await cli('experiment', ['ring-allreduce-ranks', '--predict', 'a', '--dir', dir]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/Control: ranks N = 2, 4, 8: the number of ranks in the ring/);
    expect(r.stdout).toMatch(/\|\s+2 \|\s+2 \|\s+1048576 \|\s+1\.000 \|/);
    expect(r.stdout).toMatch(/[╭╰─│┤]/); // the chart
    expect(r.stdout).toMatch(/Your prediction did not hold: you predicted \(a\)/);
    const again = await cli('experiment', ['zero1-optimizer-memory', '--predict', '83 KiB', '--dir', dir]);
    expect(again.exitCode, again.stderr).toBe(0);
    expect(again.stdout).toMatch(/Your prediction held: 83 KiB/);
    const notes = readFileSync(join(dir, 'notes', 'experiments.md'), 'utf8');
    expect(notes).toMatch(/^# Experiment notes/);
    expect(notes).toMatch(/^## ring-allreduce-ranks · \d{4}-\d\d-\d\d \d\d:\d\d UTC$/m);
    expect(notes).toMatch(/\*\*Prediction:\*\* \(a\) double each time/);
    expect(notes).toMatch(/\*\*Did it hold\?\*\* No\./);
    expect(notes).toMatch(/\*\*Did it hold\?\*\* Yes\./);
    expect(notes.match(/\*\*What I learned\*\*/g)).toHaveLength(2);
    expect([...recordedExperiments(join(dir, 'notes', 'experiments.md'))]).toEqual([['ring-allreduce-ranks', 1], ['zero1-optimizer-memory', 1]]);
  });

  it('asks for a prediction first, and refuses one that is not an option', async () => {
    const dir = scratch();
    const none = await cli('experiment', ['ring-allreduce-ranks', '--dir', dir]);
    expect(none.exitCode).toBe(2);
    expect(none.stderr).toMatch(/predict first/);
    const bad = await cli('experiment', ['ring-allreduce-ranks', '--predict', 'e', '--dir', dir]);
    expect(bad.stderr).toMatch(/'e' is not one of the options a, b, c, d/);
    expect((await cli('experiment', ['no-such', '--dir', dir])).stderr).toMatch(/there is no experiment 'no-such'/);
  });
});
