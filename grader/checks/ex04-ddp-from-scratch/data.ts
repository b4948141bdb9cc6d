/**
 * The training experiment of the ex04 checks, shared by the rank programs
 * (in the rank workers) and the checks (in the grading process): the models,
 * each rank's part of the data, and the single-process reference. The
 * checker builds every input itself from the seed; it never receives one
 * from student code.
 */
import { Generator, Tensor, deriveSeed, nn, optim, tensor } from '@dtlab/tensor';

/** One data-parallel training run. */
export interface TrainSpec {
  seed: number;
  /** Layer sizes of the MLP (input first, classes last); other models use the first and the last. */
  sizes: number[];
  /** Examples of each rank's part of a step's batch. */
  batchPerRank: number;
  steps: number;
  lr: number;
  /**
   * Rank r builds its replica from seed `modelSeed(spec, r)`: different on
   * every rank, so that a missing broadcast shows.
   */
  seedsDiffer: boolean;
}

/** The seed rank `rank` builds its replica from; the single-process reference uses rank 0's. */
export function modelSeed(spec: TrainSpec, rank: number): number {
  return deriveSeed(spec.seed, 11, spec.seedsDiffer ? rank : 0);
}

/** Builds rank `rank`'s replica of a spec's model, before any broadcast. */
export type ModelBuilder = (spec: TrainSpec, rank: number) => nn.Module;

/** The public checks' model: a tanh MLP of `spec.sizes`. */
export const buildMlp: ModelBuilder = (spec, rank) => new nn.MLP(spec.sizes, { seed: modelSeed(spec, rank), activation: 'tanh' });

/**
 * Every tensor a module holds, with the name of its first place (fields in
 * declaration order, sub-modules and arrays depth first), each tensor once,
 * and what it is: a tied weight, a frozen tensor. The checks' own list, so
 * that they never rely on a helper of the submission's.
 */
export function namedTensors(module: nn.Module): { name: string; tensor: Tensor; what: string }[] {
  const out: { name: string; tensor: Tensor; what: string }[] = [];
  const names = new Map<Tensor, string[]>();
  const visit = (value: unknown, name: string): void => {
    if (value instanceof Tensor) {
      const seen = names.get(value);
      if (seen) return void seen.push(name);
      names.set(value, [name]);
      out.push({ name, tensor: value, what: '' });
    } else if (value instanceof nn.Module) {
      for (const [k, v] of Object.entries(value)) visit(v, name ? `${name}.${k}` : k);
    } else if (Array.isArray(value)) value.forEach((v, i) => visit(v, `${name}.${i}`));
  };
  visit(module, '');
  const trained = new Set(module.parameters());
  for (const entry of out) {
    const all = names.get(entry.tensor)!;
    if (all.length > 1) entry.what = ` (tied: also ${all.slice(1).join(', ')})`;
    else if (!trained.has(entry.tensor)) entry.what = ' (frozen)';
  }
  return out;
}

/** Each rank's part of step `step`'s batch: inputs [batchPerRank, inDim] and class labels; the parts of different ranks are disjoint. */
export function rankBatch(spec: TrainSpec, step: number, rank: number): { x: Tensor; y: number[] } {
  const inDim = spec.sizes[0]!;
  const classes = spec.sizes[spec.sizes.length - 1]!;
  const gen = new Generator(deriveSeed(spec.seed, 13, step, rank));
  const x = Array.from({ length: spec.batchPerRank }, () => Array.from({ length: inDim }, () => gen.normal()));
  const y = Array.from({ length: spec.batchPerRank }, () => gen.int(classes));
  return { x: tensor(x), y };
}

/** The values after training: every tensor of `namedTensors`, after the broadcast and after each step. */
export interface Trajectory {
  initial: Tensor[];
  steps: Tensor[][];
}

/** Copies of the tensors' values now (detached, so that later steps do not change them). */
export function snapshot(tensors: Tensor[]): Tensor[] {
  return tensors.map((t) => t.detach().clone());
}

/**
 * The reference: one process trains rank 0's model on the combined batch of
 * every step (all ranks' parts, in rank order) with plain SGD: SGD, not
 * Adam, so that a gradient of the wrong scale changes the step.
 */
export function singleProcessTraining(spec: TrainSpec, worldSize: number, build: ModelBuilder = buildMlp): Trajectory {
  const model = build(spec, 0);
  const tensors = namedTensors(model).map((e) => e.tensor);
  const sgd = new optim.SGD([...new Set(model.parameters())], { lr: spec.lr });
  const out: Trajectory = { initial: snapshot(tensors), steps: [] };
  for (let s = 0; s < spec.steps; s++) {
    const parts = Array.from({ length: worldSize }, (_, r) => rankBatch(spec, s, r));
    sgd.zeroGrad();
    nn.crossEntropy(model.forward(Tensor.cat(parts.map((p) => p.x))), parts.flatMap((p) => p.y)).backward();
    sgd.step();
    out.steps.push(snapshot(tensors));
  }
  return out;
}
