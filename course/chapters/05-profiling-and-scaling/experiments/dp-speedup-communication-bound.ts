/**
 * Experiment: the speedup of data parallelism on a communication-bound job
 * as the ranks go from 1 to 16, predicted and then measured. The job is a
 * small MLP (32-64-64-8, P = 6,792 parameters) trained with one example per
 * rank per step, on a device of 1 GFLOP/s (the one of exercise 13): a step
 * computes for about 64 µs, and its gradient's ring all-reduce costs
 * 2(N-1)·(α + ⌈P/N⌉·4/β), 42 µs on 2 ranks and 341 µs on 16.
 *
 * Each run launches N ranks on the virtual device. Every rank trains two
 * steps; the second one is measured: its compute (forward, backward, SGD)
 * and its all-reduce, read from the rank's virtual clock. The prediction is
 * the closed form from one rank's measured compute C and the α-β model,
 * speedup(N) = N·C / (C + A(N)) with the batch per rank fixed (each of N ranks
 * does one rank's work, so an epoch takes 1/N of the steps).
 */
import { allReduce, estimateTime } from '@dtlab/collectives';
import { DEFAULT_COST, launch, type Comm, type DeviceSpec } from '@dtlab/runtime';
import { Generator, deriveSeed, flattenTensors, nn, noGrad, optim, tensor, unflattenTensors } from '@dtlab/tensor';
import { defineExperiment, ExperimentRunError, formatNumber, type Row } from '../../../src/authoring.ts';

const SIZES = [32, 64, 64, 8];
const P = SIZES.slice(1).reduce((n, out, i) => n + SIZES[i]! * out + out, 0);
/** The device of exercise 13: the course's device slowed tenfold in compute and memory bandwidth. */
const DEVICE: DeviceSpec = { name: 'ex13-worker', flops: { float32: 1e9, float64: 5e8 }, memoryBytes: 64 * 1024 * 1024, memoryBandwidth: 8e9 };

/** The gradient's ring all-reduce on `n` ranks, by the collectives' closed form. */
const allReduceUs = (n: number): number => estimateTime('allReduce', 'ring', 4 * P, n, DEFAULT_COST, { elementBytes: 4 });

/** Two data-parallel SGD steps on one example per rank; the second one's compute and all-reduce, µs. */
async function program(comm: Comm): Promise<{ computeUs: number; commUs: number }> {
  const model = new nn.MLP(SIZES, { seed: 5, activation: 'tanh' });
  const params = model.parameters();
  const sgd = new optim.SGD(params, { lr: 1e-3 });
  let computeUs = 0;
  let commUs = 0;
  for (let step = 0; step < 2; step++) {
    const g = new Generator(deriveSeed(9, comm.rank, step));
    const x = tensor([Array.from({ length: SIZES[0]! }, () => g.normal())]);
    const y = tensor([Array.from({ length: SIZES.at(-1)! }, () => g.normal())]);
    const t0 = comm.virtualTimeUs;
    for (const p of params) p.grad = null;
    nn.mseLoss(model.forward(x), y).backward();
    const flat = flattenTensors(params.map((p) => p.grad!));
    const t1 = comm.virtualTimeUs;
    await allReduce(comm, flat, { op: 'avg' });
    const t2 = comm.virtualTimeUs;
    const mean = unflattenTensors(flat, params.map((p) => p.shape));
    noGrad(() => params.forEach((p, i) => (p.grad = mean[i]!)));
    sgd.step();
    [computeUs, commUs] = [t1 - t0 + (comm.virtualTimeUs - t2), t2 - t1];
  }
  return { computeUs, commUs };
}

/** One worker's compute per step, measured once and shared by every row's prediction. */
let oneWorkerUs: Promise<number> | undefined;

async function measure(n: number): Promise<{ computeUs: number; commUs: number }> {
  const result = await launch({ worldSize: n, program, device: DEVICE });
  const failed = result.ranks.find((r) => r.status !== 'ok');
  if (failed) throw new ExperimentRunError('dp-speedup-communication-bound', n, `rank ${failed.rank} ended with status ${failed.status}: ${failed.error?.message ?? ''}`);
  // Every rank does the same work; the slowest one sets the step.
  const values = result.ranks.map((r) => r.value as { computeUs: number; commUs: number });
  return values.reduce((a, b) => (b.computeUs + b.commUs > a.computeUs + a.commUs ? b : a));
}

const at = (rows: Row[], n: number): Row => rows.find((r) => r.ranks === n)!;

/** The experiment: 1, 2, 4, 8 and 16 ranks; the speedup predicted from one rank's compute and the α-β model, then measured. */
export default defineExperiment({
  id: 'dp-speedup-communication-bound',
  chapter: 5,
  title: 'Speedup of a communication-bound job on 1 to 16 ranks, predicted and measured',
  question: 'One example per rank, a gradient of 27 KB: what do more ranks buy a job whose step is mostly its all-reduce?',
  control: { name: 'ranks N', key: 'ranks', changes: 'the number of data-parallel ranks, each training one example per step', values: [1, 2, 4, 8, 16] },
  fixed: `an MLP ${SIZES.join('-')} (P = ${formatNumber(P)} parameters, a ${formatNumber(4 * P)}-byte gradient), one example per rank per step, plain SGD, the ring all-reduce, the default network (α = 10 µs, 10 Gbit/s), a 1 GFLOP/s device`,
  prediction: {
    kind: 'choice',
    prompt: 'With 16 ranks, the job trains an epoch faster than on one rank by a factor of:',
    options: [
      { id: 'a', text: 'about 16: every rank does a sixteenth of the epoch', holds: (rows) => at(rows, 16).measured! >= 12 },
      { id: 'b', text: 'between 4 and 12', holds: (rows) => at(rows, 16).measured! >= 4 && at(rows, 16).measured! < 12 },
      { id: 'c', text: 'between 1 and 4: the all-reduce grows with N and soon dominates the step', holds: (rows) => at(rows, 16).measured! >= 1 && at(rows, 16).measured! < 4 },
      { id: 'd', text: 'below 1: 16 ranks are slower than one', holds: (rows) => at(rows, 16).measured! < 1 },
    ],
  },
  async run(n) {
    oneWorkerUs ??= measure(1).then((m) => m.computeUs);
    const c = await oneWorkerUs;
    const { computeUs, commUs } = await measure(n);
    const predicted = (n * c) / (c + allReduceUs(n));
    const measured = (n * c) / (computeUs + commUs);
    return { ranks: n, computeUs, commUs, formulaUs: allReduceUs(n), predicted, measured, efficiency: measured / n };
  },
  columns: [
    { key: 'ranks', label: 'N' },
    { key: 'computeUs', label: 'compute per step (µs)', format: (v) => v.toFixed(1) },
    { key: 'commUs', label: 'all-reduce, measured (µs)', format: (v) => v.toFixed(1) },
    { key: 'formulaUs', label: '2(N-1)(α + ⌈P/N⌉·4/β) (µs)', format: (v) => v.toFixed(1) },
    { key: 'predicted', label: 'speedup, predicted', format: (v) => v.toFixed(2) },
    { key: 'measured', label: 'speedup, measured', format: (v) => v.toFixed(2) },
    { key: 'efficiency', label: 'efficiency', format: (v) => v.toFixed(2) },
  ],
  chart: { key: 'measured', label: 'speedup over one rank, measured' },
  summarize(rows) {
    const s = rows.map((r) => r.measured!.toFixed(2));
    const worst = Math.max(...rows.map((r) => Math.abs(r.measured! - r.predicted!) / r.predicted!));
    return `The speedup went ${s.join(' → ')} on ${rows.map((r) => r.ranks).join(', ')} ranks, efficiency ${at(rows, 16).efficiency!.toFixed(2)} at 16; the closed form N·C/(C + A(N)) from one rank's compute was within ${(worst * 100).toFixed(2)}% of every measurement. The all-reduce's bandwidth term levels off at 2S/β while its 2(N-1)·α keeps growing, so past a few ranks each one added buys less than the last.`;
  },
});
