/**
 * Rank programs of the ex05 checks: they run in the rank workers, build this
 * rank's replica and its part of the data, train with the submission's
 * BucketedDataParallel, and return copies of the parameters after each step.
 *
 * Before each step, and after the last, every rank passes a secret fence
 * (../ex07-zero-stage-2/fences.ts), with tags the check hands over in args:
 * the fabric records it in the trace like any message, so the checks can
 * tell which all-reduces each step made (see trace.ts).
 *
 * A timed run also notes, on each rank, when backward completed each
 * parameter's gradient on the virtual clock (gradientClock), in each step
 * and in the check's own pass before the model is wrapped: gradients must
 * come from backward on the main stream.
 */
import { profile, type Comm } from '@dtlab/runtime';
import { nn, optim, tensor, type Tensor } from '@dtlab/tensor';
import { loadExport, fencer, withWhatItLeft } from '@dtlab/grader';
import { buildMlp, namedUniqueParameters, rankBatch, snapshot, type BucketSpec, type ModelBuilder, type Trajectory } from './data.ts';

/** What a BucketedDataParallel must offer (see the exercise's README). */
interface BucketedLike {
  forward(...inputs: Tensor[]): Tensor;
  finishGradientSynchronization(): Promise<void>;
}
interface BucketedClass {
  create(comm: Comm, model: nn.Module, opts: { bucketBytes: number }): Promise<BucketedLike>;
}

/** A rank's part of a step's batch. */
export type BatchFn = (spec: BucketSpec, step: number, rank: number) => { x: Tensor; y: number[] };

/** The region labels of a timed run: secret to the check (they carry its mark key), so a submission cannot add time to them. */
export function regionLabels(key: string): { reference: string; step: string } {
  return { reference: `reference forward and backward ${key}`, step: `data-parallel step ${key}` };
}

/** What a timed run returns: the parameters after each step, and when each gradient was ready (see gradientClock). */
export interface TimedTrajectory {
  steps: Trajectory;
  /** Per step, per parameter (namedUniqueParameters order): the virtual time, in µs, of its last accumulation in that step's backward; -1 if none. */
  ready: number[][];
  /** Per step: the virtual time at which the check called loss.backward(). */
  backwardAt: number[];
  /**
   * Per step, per parameter: its gradient's values on this rank as backward
   * completed it (before any all-reduce), sorted, as a float32 tensor.
   */
  gradValues: Tensor[][];
  /**
   * The check's own forward and backward of the model before it was wrapped:
   * per parameter, how long after backward began its gradient was complete.
   */
  referenceAfter: number[];
}

/**
 * Notes, for each step, when backward last accumulated each of `params`'
 * gradients, read from the rank's clock (`comm.readClock(key)`: the launch keeps it to the check) by a
 * post-accumulate-grad hook of the check's own, registered before the
 * submission is loaded. Backward runs the hooks in the order they were
 * registered, so the check's runs first, at the moment the gradient is
 * complete, before any the submission adds.
 *
 * The hook cannot be taken away: it is pinned at index 0 of a hook list the
 * parameter can no longer replace (a submission may add and remove its own
 * hooks as usual). Calling it early changes nothing, since the last call of
 * the step counts, and that is backward's own.
 */
export function gradientClock(comm: Comm, key: string, params: Tensor[], steps: number): { step(s: number): void; ready: number[][]; reference: number[]; values: (Float32Array | undefined)[][] } {
  const ready = Array.from({ length: steps }, () => new Array<number>(params.length).fill(-1));
  const reference = new Array<number>(params.length).fill(-1);
  const values = Array.from({ length: steps }, () => new Array<Float32Array | undefined>(params.length).fill(undefined));
  let row: number[] | undefined;
  let kept: (Float32Array | undefined)[] | undefined;
  params.forEach((p, i) => {
    p.registerPostAccumulateGradHook(() => {
      if (!row) return;
      row[i] = Math.max(row[i]!, comm.readClock(key));
      // A copy in plain memory: it costs no virtual time, and the submission never sees it.
      if (kept && p.grad) kept[i] = Float32Array.from(p.grad.data());
    });
    const hooks = p._postAccumulateHooks;
    Object.defineProperty(hooks, 0, { writable: false, configurable: false });
    Object.defineProperty(p, '_postAccumulateHooks', { value: hooks, writable: false, configurable: false });
  });
  return {
    // Step -1: the check's own reference pass.
    step: (s) => {
      row = s < 0 ? reference : ready[s];
      kept = s < 0 ? undefined : values[s];
    },
    ready,
    reference,
    values,
  };
}

/** Data-parallel training of the public checks' MLP (see trainWith). */
export function trainBucketed(comm: Comm, entry: string, spec: BucketSpec, fences: number[]): Promise<Trajectory> {
  return trainWith(comm, entry, spec, buildMlp, rankBatch, fences);
}

/** The same, on the virtual device, timing each step (see trainWith). */
export function timeBucketed(comm: Comm, entry: string, spec: BucketSpec, fences: number[], key: string): Promise<TimedTrajectory> {
  return timeWith(comm, entry, spec, buildMlp, rankBatch, fences, key);
}

/**
 * Data-parallel training with the submission: this rank's replica, wrapped,
 * then `spec.steps` steps of plain SGD on this rank's part of each step's
 * batch. The parameters are listed here before the submission sees the
 * model, and copied after every step. `fences` holds spec.steps + 1 tags:
 * fence s before step s, the last after the last step.
 *
 * With `key` (a run on the virtual device), the rank first runs one forward
 * and backward pass of its own, before the model is wrapped, in a region
 * labelled with the key: the compute a step needs, with no communication.
 * Then each step (forward, backward, finishGradientSynchronization) runs in
 * a region of its own, after a barrier; the fences and the barrier stay
 * outside, as their latency is not the step's.
 */
export async function trainWith(comm: Comm, entry: string, spec: BucketSpec, build: ModelBuilder, batch: BatchFn, fences: number[]): Promise<Trajectory> {
  return (await train(comm, entry, spec, build, batch, fences)).steps;
}

/** trainWith on the virtual device, timing each step and noting when each gradient was ready (TimedTrajectory). */
export function timeWith(comm: Comm, entry: string, spec: BucketSpec, build: ModelBuilder, batch: BatchFn, fences: number[], key: string): Promise<TimedTrajectory> {
  return train(comm, entry, spec, build, batch, fences, key);
}

async function train(comm: Comm, entry: string, spec: BucketSpec, build: ModelBuilder, batch: BatchFn, fences: number[], key?: string): Promise<TimedTrajectory> {
  // Bound before the submission loads: it cannot hold a fence back or send one early.
  const fence = fencer(comm, fences);
  const model = build(spec, comm.rank);
  const params = namedUniqueParameters(model).map(([, p]) => p);
  const clock = key === undefined ? undefined : gradientClock(comm, key, params, spec.steps);
  const Bucketed = await loadExport<BucketedClass>(entry, 'BucketedDataParallel');
  const sgd = new optim.SGD(params, { lr: spec.lr });
  const labels = key === undefined ? undefined : regionLabels(key);
  let referenceAfter: number[] = [];
  if (labels && clock) {
    const { x, y } = batch(spec, 0, comm.rank);
    clock.step(-1);
    let began = 0;
    profile.region(labels.reference, () => {
      const loss = nn.crossEntropy(model.forward(x), y);
      began = comm.readClock(key!);
      loss.backward();
    });
    referenceAfter = clock.reference.map((t) => t - began);
    sgd.zeroGrad();
  }
  const backwardAt: number[] = [];
  const ddp = await Bucketed.create(comm, model, { bucketBytes: spec.bucketBytes });
  const out: Trajectory = [];
  for (let s = 0; s < spec.steps; s++) {
    await fence(s);
    // Start the step together: the broadcast leaves rank 0 hundreds of µs ahead of
    // the ranks that receive, and a timed step would count that as waiting.
    if (labels) await comm.barrier();
    const { x, y } = batch(spec, s, comm.rank);
    sgd.zeroGrad();
    clock?.step(s);
    // Background work the step never waited for (all-reduces started and not
    // awaited) is waited for after it, inside the region, so its time counts.
    const step = () =>
      withWhatItLeft(comm, async () => {
        const loss = nn.crossEntropy(ddp.forward(x), y);
        if (key !== undefined) backwardAt.push(comm.readClock(key));
        loss.backward();
        await ddp.finishGradientSynchronization();
      });
    await (labels ? profile.region(labels.step, step) : step());
    sgd.step();
    out.push(snapshot(params));
  }
  await fence(spec.steps);
  const gradValues = (clock?.values ?? []).map((perParam) => perParam.map((v) => tensor((v ?? new Float32Array(0)).slice().sort())));
  return { steps: out, ready: clock?.ready ?? [], backwardAt, referenceAfter, gradValues };
}
