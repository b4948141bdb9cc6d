/**
 * Experiment: the bubble of a pipeline of p = 4 stages as the number of
 * micro-batches m grows from 1 to 16, measured on the virtual clock against
 * (p-1)/(m+p-1). The same batch of 64 rows is cut into m micro-batches and
 * run through 4 stages of two 256-wide linear layers each with GPipe's
 * all-forward-all-backward, on a virtual device of 1 GFLOP/s (so that a
 * stage's compute dwarfs the messages between stages, as in real
 * pipelines). The bubble is the mean over the stages of the share of the
 * step they did not compute.
 *
 * Only the time is measured, so there is no loss: the last stage starts each
 * micro-batch's backward from a gradient of ones, and the gradients' values
 * are never read. (Exercises 11 and 12 are where the values must be right.)
 */
import { launch, profile, type Comm, type LaunchResult } from '@dtlab/runtime';
import { chunkBounds, full, nn, randn, type Tensor } from '@dtlab/tensor';
import { defineExperiment, ExperimentRunError, type Row } from '../../../src/authoring.ts';

const P = 4;
const BATCH = 64;
const WIDTH = 256;
const LAYERS_PER_STAGE = 2;
/** A device on which compute dominates: 1 GFLOP/s, with memory bandwidth 64 times the default network's. */
const SLOW_DEVICE = { name: 'slow-1gflops', flops: 1e9, memoryBytes: 64 * 2 ** 20, memoryBandwidth: 64e9 };

/** The stage's layers: two linear layers with tanh after each. */
function stageForward(layers: nn.Linear[], x: Tensor): Tensor {
  let h = x;
  for (const l of layers) h = l.forward(h).tanh();
  return h;
}

/**
 * One GPipe step on this stage: the forwards of every micro-batch, then
 * their backwards; activations go forward under tag j, their gradients back
 * under tag j.
 */
async function gpipeTimedStep(comm: Comm, m: number): Promise<void> {
  const { rank } = comm;
  const first = rank === 0;
  const last = rank === P - 1;
  const layers = Array.from({ length: LAYERS_PER_STAGE }, (_, k) => new nn.Linear(WIDTH, WIDTH, { seed: 10 + LAYERS_PER_STAGE * rank + k }));
  const bounds = chunkBounds(BATCH, m);
  const inputs = first ? randn([BATCH, WIDTH], { seed: 5 }) : null;
  const saved: { x: Tensor; y: Tensor }[] = [];
  await comm.barrier();
  await profile.region('step', async () => {
    for (let j = 0; j < m; j++) {
      const { start, end } = bounds[j]!;
      const x = first ? inputs!.slice(0, start, end) : await comm.recv(rank - 1, { tag: j });
      x.requiresGrad = true; // so that stage 0's backward does the same work as the others'
      const y = stageForward(layers, x);
      if (!last) comm.isend(rank + 1, y.detach(), { tag: j });
      saved.push({ x, y });
    }
    for (let j = 0; j < m; j++) {
      const { x, y } = saved[j]!;
      y.backward(last ? full(y.shape, 1) : await comm.recv(rank + 1, { tag: j }));
      if (!first) comm.isend(rank - 1, x.grad!, { tag: j });
    }
  });
}

/** The bubble of a launch: the mean over stages of 1 - compute / step, with the step the longest stage's. */
function bubbleOf(result: LaunchResult, m: number): { bubble: number; stepUs: number; computeUs: number } {
  const failed = result.ranks.find((r) => r.status !== 'ok');
  if (failed) throw new ExperimentRunError('pipeline-bubble', m, `rank ${failed.rank} ended with status ${failed.status}: ${failed.error?.message ?? ''}`);
  const regions = result.device!.ranks.map((d) => d.regions.find((r) => r.label === 'step'));
  if (regions.some((r) => r === undefined)) throw new ExperimentRunError('pipeline-bubble', m, `a stage recorded no 'step' region`);
  const stepUs = Math.max(...regions.map((r) => r!.totalUs));
  const bubble = regions.reduce((sum, r) => sum + (1 - r!.computeUs / stepUs), 0) / P;
  return { bubble, stepUs, computeUs: regions.reduce((sum, r) => sum + r!.computeUs, 0) / P };
}

/** The bubble fraction of p equal stages and m micro-batches. */
export function bubbleFormula(p: number, m: number): number {
  return (p - 1) / (m + p - 1);
}

const rowAt = (rows: Row[], m: number) => rows.find((r) => r.m === m)!;

/** The experiment: m = 1 to 16 micro-batches of the same batch on p = 4 stages. */
export default defineExperiment({
  id: 'pipeline-bubble',
  chapter: 4,
  title: 'The pipeline bubble as the micro-batches grow, for p = 4 stages',
  question: 'How much of a pipeline step do the stages spend idle, and how fast does cutting the batch finer shrink it?',
  control: { name: 'micro-batches m', key: 'm', changes: 'how many micro-batches the same batch of 64 rows is cut into', values: [1, 2, 4, 8, 16] },
  fixed: `p = ${P} stages of ${LAYERS_PER_STAGE} linear layers ${WIDTH} wide (float32, tanh after each), GPipe's schedule, a batch of ${BATCH} rows, a virtual device of 1 GFLOP/s on every stage, the default network between them`,
  prediction: {
    kind: 'number',
    prompt: `With m = 16 micro-batches on p = ${P} stages, what percentage of the step will a stage spend idle on average (the bubble), under GPipe's all-forward-all-backward?`,
    unit: '%',
    tolerance: { relative: 0.1 },
    measured: (rows) => rowAt(rows, 16).gpipePercent!,
    measuredLabel: 'GPipe\'s bubble at m = 16, measured on the virtual clock',
  },
  async run(m) {
    const result = await launch({ worldSize: P, device: SLOW_DEVICE, program: (comm: Comm) => gpipeTimedStep(comm, m), timeoutMs: 60_000 });
    const { bubble, stepUs, computeUs } = bubbleOf(result, m);
    return { m, rows: BATCH / m, formulaPercent: 100 * bubbleFormula(P, m), gpipePercent: 100 * bubble, stepMs: stepUs / 1000, computeMs: computeUs / 1000 };
  },
  columns: [
    { key: 'm', label: 'm' },
    { key: 'rows', label: 'rows per micro-batch' },
    { key: 'formulaPercent', label: '(p-1)/(m+p-1) %', format: (v) => v.toFixed(1) },
    { key: 'gpipePercent', label: 'GPipe bubble %', format: (v) => v.toFixed(1) },
    { key: 'stepMs', label: 'GPipe step (ms)', format: (v) => v.toFixed(2) },
    { key: 'computeMs', label: 'compute per stage (ms)', format: (v) => v.toFixed(2) },
  ],
  chart: { key: 'gpipePercent', label: 'GPipe bubble, % of the step' },
  summarize(rows) {
    const one = rowAt(rows, 1);
    const sixteen = rowAt(rows, 16);
    return `Each stage computed about the same at every m (${one.computeMs!.toFixed(1)} ms at m = 1, ${sixteen.computeMs!.toFixed(1)} ms at m = 16); the bubble fell from ${one.gpipePercent!.toFixed(1)}% of the step at m = 1 (one stage busy at a time) to ${sixteen.gpipePercent!.toFixed(1)}% at m = 16, against (p-1)/(m+p-1) = ${sixteen.formulaPercent!.toFixed(1)}% (the rest is the time the messages between the stages add). The compute did not change; the fill and the drain did: p - 1 stage times each, and a stage time shrinks with the micro-batch. 1F1B's schedule leaves the same bubble (the reading shows why); what it changes is memory.`;
  },
});
