/**
 * The training experiment of the ex03 hidden checks, shared by the rank
 * program and the checks: a seeded MLP, and each rank's mini-batch of a
 * seeded data set at each step.
 */
import { Generator, Tensor, deriveSeed, flattenTensors, nn, optim, tensor } from '@dtlab/tensor';

/** The experiment's shape: layer sizes, examples per rank per step, steps, AdamW options. */
export interface Experiment {
  seed: number;
  sizes: number[];
  batchPerRank: number;
  steps: number;
  opts: Required<optim.AdamOptions>;
  /** Every rank saves a checkpoint (`stateDict()`) after this many steps. */
  checkpointAfter: number;
}

/** The model every rank starts from (the same on all ranks: same seed). */
export function makeModel(e: Experiment): nn.MLP {
  return new nn.MLP(e.sizes, { seed: e.seed, activation: 'tanh' });
}

/** Rank `rank`'s mini-batch at step `step`: inputs [batchPerRank, sizes[0]] and class labels. */
export function miniBatch(e: Experiment, rank: number, step: number): { x: Tensor; y: number[] } {
  const gen = new Generator(deriveSeed(e.seed, 1000 + rank, step));
  const inDim = e.sizes[0]!;
  const classes = e.sizes[e.sizes.length - 1]!;
  const x = Array.from({ length: e.batchPerRank }, () => Array.from({ length: inDim }, () => gen.normal()));
  const y = Array.from({ length: e.batchPerRank }, () => gen.int(classes));
  return { x: tensor(x), y };
}

/**
 * The reference: one process trains on the union of all ranks' mini-batches
 * (so on worldSize · batchPerRank examples a step) with optim.AdamW. Returns
 * the flat parameters after every step.
 */
export function singleProcessTraining(e: Experiment, worldSize: number): Tensor[] {
  const model = makeModel(e);
  const adamw = new optim.AdamW(model.parameters(), e.opts);
  const after: Tensor[] = [];
  for (let s = 0; s < e.steps; s++) {
    const batches = Array.from({ length: worldSize }, (_, r) => miniBatch(e, r, s));
    model.zeroGrad();
    nn.crossEntropy(model.forward(Tensor.cat(batches.map((b) => b.x))), batches.flatMap((b) => b.y)).backward();
    adamw.step();
    after.push(flattenTensors(model.parameters()));
  }
  return after;
}
