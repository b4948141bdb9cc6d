/**
 * Experiment: the traffic of one MLP block (h×4h and 4h×h) on 4 ranks,
 * tensor-parallel against data-parallel, as the tokens per step grow.
 * Tensor parallelism all-reduces the block's output [T, h] in forward and
 * its input gradient [T, h] in backward; data parallelism all-reduces the
 * block's weight gradients (8h² elements) once per step. Each run launches
 * the ranks twice and performs exactly those all-reduces on real tensors
 * with the kit's ring, then reads the bytes each rank sent from the
 * fabric's stats. No model is trained: the experiment is about what
 * crosses the network, not about where the all-reduces go in autograd.
 */
import { allReduce } from '@dtlab/collectives';
import { launch, type Comm, type LaunchResult } from '@dtlab/runtime';
import { full } from '@dtlab/tensor';
import { defineExperiment, ExperimentRunError, type Row } from '../../../src/authoring.ts';

const N = 4;
const H = 128;
const WEIGHTS = 8 * H * H;

/** Tensor parallelism, one step of one block: g's all-reduce of y [T, h], then f's of dL/dx [T, h]. */
async function tensorParallel(comm: Comm, tokens: number): Promise<void> {
  await allReduce(comm, full([tokens, H], 1));
  await allReduce(comm, full([tokens, H], 1));
}

/** Data parallelism, one step of one block: the all-reduce of its weight gradients. */
async function dataParallel(comm: Comm): Promise<void> {
  await allReduce(comm, full([WEIGHTS], 1));
}

function bytesPerRank(result: LaunchResult, tokens: number, what: string): number {
  const failed = result.ranks.find((r) => r.status !== 'ok');
  if (failed) throw new ExperimentRunError('tp-vs-dp-traffic', tokens, `${what}: rank ${failed.rank} ended with status ${failed.status}: ${failed.error?.message ?? ''}`);
  return Math.max(...result.stats.map((s) => s.bytesSent));
}

const ratioAt = (rows: Row[], tokens: number) => rows.find((r) => r.tokens === tokens)!.ratio!;

/** The experiment: tokens per step 128 to 2048 for h = 128 on 4 ranks. */
export default defineExperiment({
  id: 'tp-vs-dp-traffic',
  chapter: 3,
  title: 'Tensor against data parallelism: bytes per step of one MLP block as the tokens grow',
  question: 'Tensor parallelism never sends weight gradients; does it send less than data parallelism?',
  control: { name: 'tokens per step T', key: 'tokens', changes: 'the tokens (batch × sequence) one step of the block processes', values: [128, 256, 512, 1024, 2048] },
  fixed: `one MLP block with h = ${H} (weights h×4h and 4h×h, 8h² = ${WEIGHTS} float32 elements), N = ${N} ranks, ring all-reduces, the default network`,
  prediction: {
    kind: 'number',
    prompt: `At T = 2048 tokens per step, how many times the bytes of data parallelism (one all-reduce of the 8h² weight gradients) will tensor parallelism (all-reduces of the output [T, h] in forward and of the input gradient [T, h] in backward) send per rank?`,
    unit: 'times',
    tolerance: { relative: 0.05 },
    measured: (rows) => ratioAt(rows, 2048),
    measuredLabel: 'tensor-parallel bytes over data-parallel bytes per rank at T = 2048',
  },
  async run(tokens) {
    const tp = await launch({ worldSize: N, program: (comm: Comm) => tensorParallel(comm, tokens) });
    const dp = await launch({ worldSize: N, program: dataParallel });
    const tpBytes = bytesPerRank(tp, tokens, 'tensor parallelism');
    const dpBytes = bytesPerRank(dp, tokens, 'data parallelism');
    return {
      tokens,
      tpKiB: tpBytes / 1024,
      dpKiB: dpBytes / 1024,
      ratio: tpBytes / dpBytes,
      formula: (2 * tokens * H) / WEIGHTS,
      tpUs: Math.max(...tp.stats.map((s) => s.vtUs)),
      dpUs: Math.max(...dp.stats.map((s) => s.vtUs)),
    };
  },
  columns: [
    { key: 'tokens', label: 'T' },
    { key: 'tpKiB', label: 'tensor-parallel KiB per rank', format: (v) => v.toFixed(1) },
    { key: 'dpKiB', label: 'data-parallel KiB per rank', format: (v) => v.toFixed(1) },
    { key: 'ratio', label: 'TP / DP', format: (v) => v.toFixed(3) },
    { key: 'formula', label: '2·T·h / 8h²', format: (v) => v.toFixed(3) },
    { key: 'tpUs', label: 'TP virtual time (µs)', format: (v) => v.toFixed(1) },
    { key: 'dpUs', label: 'DP virtual time (µs)', format: (v) => v.toFixed(1) },
  ],
  chart: { key: 'ratio', label: 'tensor-parallel bytes / data-parallel bytes' },
  summarize(rows) {
    const cross = rows.find((r) => Math.abs(r.ratio! - 1) < 1e-9);
    return `Tensor parallelism's traffic grew with the tokens, data parallelism's stayed at ${rows[0]!.dpKiB!.toFixed(1)} KiB per rank: the two were equal at T = ${cross ? cross.tokens : '4h'} = 4h, and at T = 2048 tensor parallelism sent ${ratioAt(rows, 2048).toFixed(2)} times as much. Real steps carry millions of tokens: tensor parallelism is chosen for memory and per-rank compute, and kept on the fastest links.`;
  },
});
