/**
 * Experiment: the bubble of a pipeline of p = 4 stages as the number of
 * micro-batches m grows from 1 to 16, measured on the virtual clock against
 * (p-1)/(m+p-1). The same batch of 64 rows is cut into m micro-batches and
 * run through 4 stages of two 256-wide linear layers each, on a virtual
 * device of 1 GFLOP/s (so that a stage's compute dwarfs the messages
 * between stages, as in real pipelines), once with GPipe's
 * all-forward-all-backward and once with 1F1B. The bubble is the mean over
 * the stages of the share of the step they did not compute.
 */
import { launch, profile, type Comm, type LaunchResult } from '@dtlab/runtime';
import { chunkBounds, nn, randn, type Tensor } from '@dtlab/tensor';
import { defineExperiment, ExperimentRunError, type Row } from '../../../src/authoring.ts';

const P = 4;
const BATCH = 64;
const WIDTH = 256;
const LAYERS_PER_STAGE = 2;
/** A device on which compute dominates: 1 GFLOP/s, with memory bandwidth 64 times the default network's. */
const SLOW_DEVICE = { name: 'slow-1gflops', flops: 1e9, memoryBytes: 64 * 2 ** 20, memoryBandwidth: 64e9 };

/** One step of the pipeline on one stage: forwards ('F') and backwards ('B') of micro-batches, in order. */
export type Schedule = readonly (readonly ['F' | 'B', number])[];

/** GPipe: every forward, then every backward. */
export function gpipe(m: number): Schedule {
  return [...Array.from({ length: m }, (_, j) => ['F', j] as const), ...Array.from({ length: m }, (_, j) => ['B', j] as const)];
}

/** 1F1B on stage s of p: min(p - s - 1, m) warm-up forwards, one forward and one backward in turn, the backwards left. */
export function oneFOneB(m: number, s: number, p: number): Schedule {
  const warmup = Math.min(p - s - 1, m);
  const order: ['F' | 'B', number][] = [];
  for (let j = 0; j < warmup; j++) order.push(['F', j]);
  for (let j = warmup; j < m; j++) order.push(['F', j], ['B', j - warmup]);
  for (let j = m - warmup; j < m; j++) order.push(['B', j]);
  return order;
}

/** The stage's layers: two linear layers, tanh after each but the model's very last. */
function stageForward(layers: nn.Linear[], last: boolean, x: Tensor): Tensor {
  let h = x;
  layers.forEach((l, k) => {
    h = l.forward(h);
    if (!(last && k === layers.length - 1)) h = h.tanh();
  });
  return h;
}

/** Runs one step of `schedule` on this stage; activations go forward under tag j, their gradients back under tag j. */
async function pipelineStep(comm: Comm, schedule: Schedule, m: number): Promise<void> {
  const { rank } = comm;
  const first = rank === 0;
  const last = rank === P - 1;
  const layers = Array.from({ length: LAYERS_PER_STAGE }, (_, k) => new nn.Linear(WIDTH, WIDTH, { seed: 10 + LAYERS_PER_STAGE * rank + k }));
  const bounds = chunkBounds(BATCH, m);
  const inputs = first ? randn([BATCH, WIDTH], { seed: 5 }) : null;
  const targets = Array.from({ length: BATCH }, (_, i) => (i * 7) % WIDTH);
  const saved = new Map<number, { x: Tensor; y: Tensor }>();
  await comm.barrier();
  await profile.region('step', async () => {
    for (const [what, j] of schedule) {
      const { start, end } = bounds[j]!;
      if (what === 'F') {
        const x = first ? inputs!.slice(0, start, end) : await comm.recv(rank - 1, { tag: j });
        x.requiresGrad = true; // so that stage 0's backward does the same work as the others'
        const out = stageForward(layers, last, x);
        const y = last ? nn.crossEntropy(out, targets.slice(start, end)).mul((end - start) / BATCH) : out;
        if (!last) comm.isend(rank + 1, y.detach(), { tag: j });
        saved.set(j, { x, y });
      } else {
        const { x, y } = saved.get(j)!;
        saved.delete(j);
        if (last) y.backward();
        else y.backward(await comm.recv(rank + 1, { tag: j }));
        if (!first) comm.isend(rank - 1, x.grad!, { tag: j });
      }
    }
  });
}

/** The bubble of a launch: the mean over stages of 1 - compute / step, with the step the longest stage's. */
function bubbleOf(result: LaunchResult, m: number, what: string): { bubble: number; stepUs: number; computeUs: number } {
  const failed = result.ranks.find((r) => r.status !== 'ok');
  if (failed) throw new ExperimentRunError('pipeline-bubble', m, `${what}: rank ${failed.rank} ended with status ${failed.status}: ${failed.error?.message ?? ''}`);
  const regions = result.device!.ranks.map((d) => d.regions.find((r) => r.label === 'step'));
  if (regions.some((r) => r === undefined)) throw new ExperimentRunError('pipeline-bubble', m, `${what}: a stage recorded no 'step' region`);
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
  fixed: `p = ${P} stages of ${LAYERS_PER_STAGE} linear layers ${WIDTH} wide (float32, tanh between), a batch of ${BATCH} rows, a virtual device of 1 GFLOP/s on every stage, the default network between them`,
  prediction: {
    kind: 'number',
    prompt: `With m = 16 micro-batches on p = ${P} stages, what percentage of the step will a stage spend idle on average (the bubble), under GPipe's all-forward-all-backward?`,
    unit: '%',
    tolerance: { relative: 0.1 },
    measured: (rows) => rowAt(rows, 16).gpipePercent!,
    measuredLabel: 'GPipe\'s bubble at m = 16, measured on the virtual clock',
  },
  async run(m) {
    const g = await launch({ worldSize: P, device: SLOW_DEVICE, program: (comm: Comm) => pipelineStep(comm, gpipe(m), m), timeoutMs: 60_000 });
    const o = await launch({ worldSize: P, device: SLOW_DEVICE, program: (comm: Comm) => pipelineStep(comm, oneFOneB(m, comm.rank, P), m), timeoutMs: 60_000 });
    const gp = bubbleOf(g, m, 'GPipe');
    const ob = bubbleOf(o, m, '1F1B');
    return {
      m,
      rows: BATCH / m,
      formulaPercent: 100 * bubbleFormula(P, m),
      gpipePercent: 100 * gp.bubble,
      oneFOneBPercent: 100 * ob.bubble,
      stepMs: gp.stepUs / 1000,
      computeMs: gp.computeUs / 1000,
    };
  },
  columns: [
    { key: 'm', label: 'm' },
    { key: 'rows', label: 'rows per micro-batch' },
    { key: 'formulaPercent', label: '(p-1)/(m+p-1) %', format: (v) => v.toFixed(1) },
    { key: 'gpipePercent', label: 'GPipe bubble %', format: (v) => v.toFixed(1) },
    { key: 'oneFOneBPercent', label: '1F1B bubble %', format: (v) => v.toFixed(1) },
    { key: 'stepMs', label: 'GPipe step (ms)', format: (v) => v.toFixed(2) },
    { key: 'computeMs', label: 'compute per stage (ms)', format: (v) => v.toFixed(2) },
  ],
  chart: { key: 'gpipePercent', label: 'GPipe bubble, % of the step' },
  summarize(rows) {
    const one = rowAt(rows, 1);
    const sixteen = rowAt(rows, 16);
    return `Each stage computed about the same at every m (${one.computeMs!.toFixed(1)} ms at m = 1, ${sixteen.computeMs!.toFixed(1)} ms at m = 16); the bubble fell from ${one.gpipePercent!.toFixed(1)}% of the step at m = 1 (one stage busy at a time) to ${sixteen.gpipePercent!.toFixed(1)}% at m = 16, against (p-1)/(m+p-1) = ${sixteen.formulaPercent!.toFixed(1)}% (the rest is the time the messages between the stages add). 1F1B left the same bubble, ${sixteen.oneFOneBPercent!.toFixed(1)}% at m = 16: it saves memory, not time.`;
  },
});
