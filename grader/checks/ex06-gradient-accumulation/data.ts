/**
 * The training runs of the ex06 checks, shared by the rank programs (in the
 * rank workers) and the checks (in the grading process): the model, every
 * rank's micro-batches of every step, and the references. The checker builds
 * every input itself from the seed.
 */
import { Generator, Tensor, deriveSeed, nn, optim, tensor } from '@dtlab/tensor';

/** One run of gradient accumulation. */
export interface AccumulationSpec {
  seed: number;
  /** Layer sizes of the MLP (input first, classes last). */
  sizes: number[];
  lr: number;
  /** lengths[step][rank]: the lengths of that rank's micro-batches at that step (every rank the same count and the same sum). */
  lengths: number[][][];
}

/**
 * Micro-batch lengths for `steps` steps on `worldSize` ranks: each rank's `k`
 * micro-batches of each step hold `total` examples together, split at random
 * (each at least 1), differently on every rank and step.
 */
export function drawLengths(seed: number, steps: number, worldSize: number, k: number, total: number): number[][][] {
  const gen = new Generator(seed);
  return Array.from({ length: steps }, () =>
    Array.from({ length: worldSize }, () => {
      const cuts = new Set<number>();
      while (cuts.size < k - 1) cuts.add(1 + gen.int(total - 1));
      const edges = [0, ...[...cuts].sort((a, b) => a - b), total];
      return edges.slice(1).map((e, i) => e - edges[i]!);
    }),
  );
}

/** The model every rank starts from: the same seed on every rank (this exercise has no broadcast). */
export function makeModel(spec: AccumulationSpec): nn.MLP {
  return new nn.MLP(spec.sizes, { seed: deriveSeed(spec.seed, 31), activation: 'tanh' });
}

/**
 * A seed for each (step, rank, micro-batch). They must all differ: two ranks
 * holding the same micro-batches in another order would give gradients that
 * agree across ranks, and that hides a missing all-reduce. deriveSeed gives
 * distinct seeds to such grids of small keys (packages/tensor/src/random.ts).
 */
function microBatchSeed(seed: number, step: number, rank: number, i: number): number {
  return deriveSeed(seed, 37, step, rank, i);
}

/** Micro-batch `i` of rank `rank` at step `step`: inputs and class labels. */
export function microBatch(spec: AccumulationSpec, step: number, rank: number, i: number): { x: Tensor; y: number[] } {
  const n = spec.lengths[step]![rank]![i]!;
  const gen = new Generator(microBatchSeed(spec.seed, step, rank, i));
  const x = Array.from({ length: n }, () => Array.from({ length: spec.sizes[0]! }, () => gen.normal()));
  const y = Array.from({ length: n }, () => gen.int(spec.sizes[spec.sizes.length - 1]!));
  return { x: tensor(x, { shape: [n, spec.sizes[0]!] }), y };
}

/** Every rank's micro-batches of a step. */
export function stepBatches(spec: AccumulationSpec, step: number): { x: Tensor; y: number[] }[][] {
  return spec.lengths[step]!.map((rank, r) => rank.map((_, i) => microBatch(spec, step, r, i)));
}

/** What a run leaves: every parameter's gradient at each step, and the parameters after each SGD step. */
export interface AccumulationRun {
  grads: Tensor[][];
  params: Tensor[][];
}

/** Copies of the tensors' values now. */
export function snapshot(tensors: Tensor[]): Tensor[] {
  return tensors.map((t) => t.detach().clone());
}

/**
 * How a step's examples are weighed: 'examples', the mean over every
 * example of the step (the right one); 'micro-batches', the mean over the
 * ranks of each rank's mean of its micro-batches' mean losses (the
 * tempting one, used only to say what a wrong gradient equals).
 */
export type Weighting = 'examples' | 'micro-batches';

/**
 * One process training on every step's whole batch with plain SGD: the
 * gradient of each step (before its update) and the parameters after it.
 */
export function singleProcessTraining(spec: AccumulationSpec, weighting: Weighting = 'examples'): AccumulationRun {
  const model = makeModel(spec);
  const params = model.parameters();
  const sgd = new optim.SGD(params, { lr: spec.lr });
  const out: AccumulationRun = { grads: [], params: [] };
  for (let s = 0; s < spec.lengths.length; s++) {
    const ranks = stepBatches(spec, s);
    sgd.zeroGrad();
    if (weighting === 'examples') {
      const all = ranks.flat();
      nn.crossEntropy(model.forward(Tensor.cat(all.map((b) => b.x))), all.flatMap((b) => b.y)).backward();
    } else {
      for (const mbs of ranks) for (const b of mbs) nn.crossEntropy(model.forward(b.x), b.y).div(mbs.length * ranks.length).backward();
    }
    out.grads.push(snapshot(params.map((p) => p.grad!)));
    sgd.step();
    out.params.push(snapshot(params));
  }
  return out;
}
