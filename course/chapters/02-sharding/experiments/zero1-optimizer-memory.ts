/**
 * Experiment: ZeRO stage 1 on 1 to 8 ranks, optimizer memory per rank.
 * Each rank builds the same MLP, takes its chunk of the flat parameters
 * with chunkBounds, allocates Adam's two moments for that chunk only, and
 * measures what it holds with retainedBytes. No optimizer step is taken:
 * the experiment is about where the state lives, not how it is updated.
 */
import { chunkBounds } from '@dtlab/collectives';
import { launch, retainedBytes, type Comm } from '@dtlab/runtime';
import { nn, zeros } from '@dtlab/tensor';
import { defineExperiment, ExperimentRunError } from '../../../src/authoring.ts';

/** The model: 64-256-256-11, P = 85259 parameters, which no N from 2 to 8 divides (so shards are uneven). */
function model(): nn.Sequential {
  return new nn.Sequential(new nn.Linear(64, 256, { seed: 1 }), new nn.ReLU(), new nn.Linear(256, 256, { seed: 2 }), new nn.ReLU(), new nn.Linear(256, 11, { seed: 3 }));
}

/** P of `model()`, computed once here so that the prediction's prompt can state it. */
const P = model().numParameters();

function program(comm: Comm): { shard: number; optimizerBytes: number; parameterBytes: number } {
  const m = model();
  const { start, end } = chunkBounds(m.numParameters(), comm.worldSize)[comm.rank]!;
  const state = { expAvg: zeros([end - start]), expAvgSq: zeros([end - start]) };
  return { shard: end - start, optimizerBytes: retainedBytes(state), parameterBytes: retainedBytes(m.parameters()) };
}

const KiB = 1024;

/** The experiment: ranks 1 to 8; the largest shard's Adam moments per rank, measured with retainedBytes. */
export default defineExperiment({
  id: 'zero1-optimizer-memory',
  chapter: 2,
  title: 'ZeRO stage 1 on 1 to 8 ranks: optimizer memory per rank',
  question: 'How much of Adam\'s state does each rank keep as the ranks go from 1 to 8?',
  control: { name: 'ranks N', key: 'ranks', changes: 'the number of data-parallel ranks that share the optimizer state', values: [1, 2, 3, 4, 5, 6, 7, 8] },
  fixed: `an MLP 64-256-256-11 with P = ${P} float32 parameters, Adam's two moments (m and v) in float32, shards by chunkBounds(P, N)`,
  prediction: {
    kind: 'number',
    prompt: `On one rank Adam's moments take 2·4·P = ${((8 * P) / KiB).toFixed(1)} KiB. How many KiB of moments will the largest shard hold on 8 ranks?`,
    unit: 'KiB',
    tolerance: { relative: 0.05 },
    measured: (rows) => rows.find((r) => r.ranks === 8)!.optimizerKiB!,
    measuredLabel: 'the largest shard\'s moments on 8 ranks',
  },
  async run(n) {
    const result = await launch({ worldSize: n, program });
    const failed = result.ranks.find((r) => r.status !== 'ok');
    if (failed) throw new ExperimentRunError('zero1-optimizer-memory', n, `rank ${failed.rank} ended with status ${failed.status}: ${failed.error?.message ?? ''}`);
    const values = result.ranks.map((r) => r.value as ReturnType<typeof program>);
    const total = values.reduce((k, v) => k + v.shard, 0);
    if (total !== P) throw new ExperimentRunError('zero1-optimizer-memory', n, `the shards hold ${total} elements in all, not P = ${P}`);
    const largest = Math.max(...values.map((v) => v.optimizerBytes));
    return {
      ranks: n,
      largestShard: Math.max(...values.map((v) => v.shard)),
      smallestShard: Math.min(...values.map((v) => v.shard)),
      optimizerKiB: largest / KiB,
      ofOneRank: largest / (8 * P),
      parameterKiB: Math.max(...values.map((v) => v.parameterBytes)) / KiB,
    };
  },
  columns: [
    { key: 'ranks', label: 'N' },
    { key: 'largestShard', label: 'largest shard (elements)' },
    { key: 'smallestShard', label: 'smallest shard' },
    { key: 'optimizerKiB', label: 'moments per rank (KiB)', format: (v) => v.toFixed(1) },
    { key: 'ofOneRank', label: 'of 1 rank\'s', format: (v) => v.toFixed(3) },
    { key: 'parameterKiB', label: 'parameters per rank (KiB)', format: (v) => v.toFixed(1) },
  ],
  chart: { key: 'optimizerKiB', label: 'Adam moments per rank (KiB)' },
  summarize(rows) {
    const first = rows[0]!;
    const last = rows.at(-1)!;
    return `The moments per rank fell from ${first.optimizerKiB!.toFixed(1)} KiB on ${first.ranks} rank to ${last.optimizerKiB!.toFixed(1)} KiB on ${last.ranks}: 1/N of the whole, up to one element of rounding (the largest shard has ⌈P/N⌉ elements). The parameters stayed at ${last.parameterKiB!.toFixed(1)} KiB on every rank: stage 1 shards only the optimizer state.`;
  },
});
