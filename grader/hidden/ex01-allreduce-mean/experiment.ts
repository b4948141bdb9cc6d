/**
 * The seed experiment of ex01, shared by the rank program and the check:
 * a seeded MLP, and each rank's mini-batch of a seeded data set.
 */
import { Generator, deriveSeed, nn, tensor, type Tensor } from '@dtlab/tensor';

/** The experiment's shape: layer sizes, examples per rank, learning rate. */
export interface Experiment {
  seed: number;
  sizes: number[];
  batchPerRank: number;
  lr: number;
}

/** The model every rank starts from (the same on all ranks: same seed). */
export function makeModel(e: Experiment): nn.MLP {
  return new nn.MLP(e.sizes, { seed: e.seed, activation: 'tanh' });
}

/** Rank `rank`'s mini-batch: inputs [batchPerRank, sizes[0]] and class labels. */
export function miniBatch(e: Experiment, rank: number): { x: Tensor; y: number[] } {
  const gen = new Generator(deriveSeed(e.seed, 1000 + rank));
  const inDim = e.sizes[0]!;
  const classes = e.sizes[e.sizes.length - 1]!;
  const x = Array.from({ length: e.batchPerRank }, () => Array.from({ length: inDim }, () => gen.normal()));
  const y = Array.from({ length: e.batchPerRank }, () => gen.int(classes));
  return { x: tensor(x), y };
}
