/**
 * The training job of exercise 13, on the virtual device: a data-parallel
 * MLP whose step has the three parts a profile must tell apart, each of
 * which the device charges as a real job would pay for it.
 *
 * - **Input** (`loadBatch`): the host's input pipeline (reading, decoding,
 *   augmenting a batch), charged with `comm.elapse` on the rank's main stream.
 *   The first batch pays extra: the dataset's files are opened then.
 * - **Compute** (`launchStep`): forward, backward and the SGD update, real
 *   tensor ops charged by the device's roofline. They run on the device's
 *   queue, a background stream, and `launchStep` returns as soon as they are
 *   queued, as CUDA kernel launches return: a timer read right after it has
 *   not seen the work. The first steps pay extra (kernel compilation,
 *   autotuning, the allocator growing its pool), less each step until
 *   `warmupSteps`.
 * - **Communication**: the gradient's ring all-reduce (mean), on the same
 *   queue between backward and the update, over the job's network
 *   (`spec.network`, see extraRingUs). With one rank it is free.
 *
 * The host waits for the previous step's device work before queueing the
 * next (a queue one step deep, as a loop that reads the loss each step
 * gets), so the next batch's input overlaps with the device's step:
 * in steady state a step takes max(input, compute + all-reduce).
 *
 * The job's figures are in #private fields, out of a submission's reach:
 * a planner learns them by measuring, as it would on a real machine.
 */
import { allReduce } from '@dtlab/collectives';
import type { Comm, CostModel, DeviceSpec, Work } from '@dtlab/runtime';
import { DEFAULT_COST } from '@dtlab/runtime';
import { Generator, deriveSeed, flattenTensors, nn, noGrad, optim, tensor, unflattenTensors, type Tensor } from '@dtlab/tensor';

/**
 * The device every rank of the exercise's jobs runs on: the course's device
 * slowed tenfold in both compute and memory bandwidth (same balance, 64 MiB),
 * so that small models, cheap to run in JavaScript, take the virtual times of
 * the course's larger ones.
 */
export const JOB_DEVICE: DeviceSpec = { name: 'ex13-worker', flops: { float32: 1e9, float64: 5e8 }, memoryBytes: 64 * 1024 * 1024, memoryBandwidth: 8e9 };

/** What a job is made of: the model, the data, the input pipeline and the warm-up. All of it is data, drawn from a seed by the checks. */
export interface JobSpec {
  /** A name to report the job by ("compute-bound 32-64-64-8, batch 32"). */
  name: string;
  /** Layer sizes of the MLP (tanh between layers). */
  sizes: number[];
  /** Extra elementwise ops after each hidden activation (three each: tanh, add, scale): memory-bandwidth-bound work. */
  elementwiseRounds: number;
  /** Examples each rank processes per step. */
  batchPerRank: number;
  /** Examples in one epoch: an epoch on N ranks is ⌈epochExamples / (N · batchPerRank)⌉ steps. */
  epochExamples: number;
  /** Host time of the input pipeline per batch, µs. */
  inputUs: number;
  /** Extra host time of the first batch (opening the dataset), µs. */
  firstInputUs: number;
  /** Device steps that pay a warm-up cost: step k < warmupSteps pays firstStepUs · (warmupSteps - k) / warmupSteps extra. */
  warmupSteps: number;
  /** Extra device time of the first step, µs. */
  firstStepUs: number;
  /** The most data-parallel ranks the cluster has. */
  maxRanks: number;
  /** The weights' seed (every rank starts from the same replica) and the data's. */
  seed: number;
  /**
   * The network between the job's ranks: the fabric's (DEFAULT_COST) when
   * absent, or one no faster in latency or in bandwidth (see extraRingUs).
   */
  network?: CostModel;
}

/**
 * What the job's network adds to a ring all-reduce of `bytes` on `ranks`
 * ranks over the fabric the checks launch on (the default cost model: a
 * check's launch cannot choose another). The ring takes 2(N-1)·(α + c/β), c
 * its largest chunk in whole float32 elements (⌈S/4N⌉·4 bytes); on the
 * job's network (α', β') it takes 2(N-1)·(α' + c/β'). The job charges the
 * difference, 2(N-1)·((α' - α) + c·(1/β' - 1/β)), on its device queue
 * beside the fabric's all-reduce, so that a step takes exactly what the
 * closed form on the job's network says (plan.ts's allReduceUs). Throws for
 * a network faster than the fabric (checkJobNetwork).
 */
export function extraRingUs(network: CostModel, bytes: number, ranks: number): number {
  checkJobNetwork(network);
  if (ranks === 1) return 0;
  const chunk = Math.ceil(bytes / 4 / ranks) * 4;
  return 2 * (ranks - 1) * (network.alphaUs - DEFAULT_COST.alphaUs + chunk * (1 / network.bytesPerUs - 1 / DEFAULT_COST.bytesPerUs));
}

/** Throws for a network faster than the fabric's in latency or bandwidth, which the job cannot run (extraRingUs would charge less than nothing). */
export function checkJobNetwork(network: CostModel): void {
  if (!(network.alphaUs >= DEFAULT_COST.alphaUs && network.bytesPerUs > 0 && network.bytesPerUs <= DEFAULT_COST.bytesPerUs)) {
    throw new RangeError(`BUG: the job's network ${JSON.stringify(network)} is faster than the fabric's ${JSON.stringify(DEFAULT_COST)}, which the job cannot run: it needs alphaUs >= ${DEFAULT_COST.alphaUs} and bytesPerUs <= ${DEFAULT_COST.bytesPerUs}`);
  }
}

/** A batch as the job hands it out: opaque to the planner, handed back to `launchStep`. */
export interface JobBatch {
  readonly x: Tensor;
  readonly y: Tensor;
}

/** Learning rate of the job's SGD: small, so that nothing grows over the steps the checks run. */
const LR = 1e-3;

/** Parameter elements of an MLP with these sizes (weights and biases). */
export function parameterCount(sizes: readonly number[]): number {
  let p = 0;
  for (let i = 0; i + 1 < sizes.length; i++) p += sizes[i]! * sizes[i + 1]! + sizes[i + 1]!;
  return p;
}

/**
 * A data-parallel training job on one rank. Every rank of a launch builds its
 * own from the same spec (the same replica); `loadBatch` gives each rank its
 * own examples.
 */
export class DeviceTrainingJob {
  /** Name of the job. */
  readonly name: string;
  /** Examples each rank processes per step. */
  readonly batchPerRank: number;
  /** Examples in one epoch. */
  readonly epochExamples: number;
  /** Bytes of the gradient each step all-reduces (float32). */
  readonly gradientBytes: number;
  /** The nominal FLOPs of a step, by the 6 · parameters · examples rule (forward 2, backward 4). */
  readonly nominalFlopsPerStep: number;
  /** The network between ranks: the fabric's alpha-beta cost. */
  readonly network: CostModel;
  /** The device each rank runs on. */
  readonly device: DeviceSpec;
  /** The most data-parallel ranks available. */
  readonly maxRanks: number;

  readonly #spec: JobSpec;
  readonly #model: nn.MLP;
  readonly #params: Tensor[];
  readonly #optimizer: optim.SGD;
  #batches = 0;
  #steps = 0;
  #pending: Work<void> | null = null;

  constructor(spec: JobSpec) {
    this.#spec = { ...spec, sizes: [...spec.sizes] };
    this.name = spec.name;
    this.batchPerRank = spec.batchPerRank;
    this.epochExamples = spec.epochExamples;
    this.maxRanks = spec.maxRanks;
    const p = parameterCount(spec.sizes);
    this.gradientBytes = 4 * p;
    this.nominalFlopsPerStep = 6 * p * spec.batchPerRank;
    this.network = { ...(spec.network ?? DEFAULT_COST) };
    checkJobNetwork(this.network);
    this.device = JOB_DEVICE;
    this.#model = new nn.MLP(spec.sizes, { seed: spec.seed, activation: 'tanh' });
    this.#params = this.#model.parameters();
    this.#optimizer = new optim.SGD(this.#params, { lr: LR });
    Object.freeze(this);
  }

  /** Runs this rank's input pipeline for its next batch on the host; resolves when the batch is ready. */
  async loadBatch(comm: Comm): Promise<JobBatch> {
    const s = this.#spec;
    const index = this.#batches++;
    comm.elapse(s.inputUs + (index === 0 ? s.firstInputUs : 0), 'input pipeline');
    const gen = new Generator(deriveSeed(s.seed, 1, comm.rank, index));
    const din = s.sizes[0]!;
    const dout = s.sizes.at(-1)!;
    const x = tensor(Array.from({ length: s.batchPerRank * din }, () => gen.normal()), { shape: [s.batchPerRank, din] });
    const y = tensor(Array.from({ length: s.batchPerRank * dout }, () => gen.normal() * 0.5), { shape: [s.batchPerRank, dout] });
    return Object.freeze({ x, y });
  }

  /**
   * Queues one training step of `batch` on the device (forward, backward, the
   * gradient all-reduce, the SGD update) and resolves as soon as it is queued,
   * before the device has done it. Waits first for the step queued before, if
   * the device is still on it: the queue holds one step.
   */
  async launchStep(comm: Comm, batch: JobBatch): Promise<void> {
    if (!batch || !(batch.x instanceof Object) || !(batch.y instanceof Object)) throw new TypeError(`rank ${comm.rank}: launchStep: expected a batch from loadBatch, got ${String(batch)}`);
    await this.synchronize(comm);
    const k = this.#steps++;
    const s = this.#spec;
    this.#pending = comm.background(async () => {
      if (k < s.warmupSteps) comm.elapse((s.firstStepUs * (s.warmupSteps - k)) / s.warmupSteps, 'warm-up: kernel compilation and autotuning');
      await this.#deviceStep(comm, batch);
    }, 'device queue');
  }

  /** Waits until the device has finished every step queued so far (as torch.cuda.synchronize does). */
  async synchronize(_comm: Comm): Promise<void> {
    const pending = this.#pending;
    this.#pending = null;
    if (pending) await pending.wait();
  }

  /** One step as a training loop runs it: load the next batch, then queue its step. Resolves before the device has finished it. */
  async step(comm: Comm): Promise<void> {
    const batch = await this.loadBatch(comm);
    await this.launchStep(comm, batch);
  }

  /** Forward, backward, the mean gradient over the ranks, and SGD: what the device does for one step. */
  async #deviceStep(comm: Comm, batch: JobBatch): Promise<void> {
    for (const p of this.#params) p.grad = null;
    let h = batch.x;
    const layers = this.#model.layers;
    for (let i = 0; i < layers.length; i++) {
      h = layers[i]!.forward(h);
      if (i % 2 === 1) for (let r = 0; r < this.#spec.elementwiseRounds; r++) h = h.add(h.tanh()).mul(0.5);
    }
    nn.mseLoss(h, batch.y).backward();
    const grads = this.#params.map((p) => p.grad!);
    const flat = flattenTensors(grads);
    // The job's network beyond the fabric's (extraRingUs): nothing on the fabric's own network or on one rank.
    const extra = extraRingUs(this.network, this.gradientBytes, comm.worldSize);
    if (extra > 0) comm.elapse(extra, "the job's network beyond the fabric's");
    await allReduce(comm, flat, { op: 'avg' });
    const mean = unflattenTensors(flat, grads.map((g) => g.shape));
    noGrad(() => this.#params.forEach((p, i) => (p.grad = mean[i]!)));
    this.#optimizer.step();
  }
}
