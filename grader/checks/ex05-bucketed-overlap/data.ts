/**
 * The training runs of the ex05 checks, shared by the rank programs (in the
 * rank workers) and the checks (in the grading process): the models, each
 * rank's part of the data, the single-process reference, and the bucket
 * rule of the README, by which the checks know which all-reduces a step must
 * make. The checker builds every input itself from the seed.
 */
import { Generator, Tensor, deriveSeed, nn, optim, tensor } from '@dtlab/tensor';

/** One data-parallel training run. */
export interface BucketSpec {
  seed: number;
  /** Layer sizes of the MLP (input first, classes last); other models use the first and the last. */
  sizes: number[];
  batchPerRank: number;
  steps: number;
  lr: number;
  /** The bucket size given to the submission. */
  bucketBytes: number;
}

/** Builds rank `rank`'s replica of a spec's model, before any broadcast. */
export type ModelBuilder = (spec: BucketSpec, rank: number) => nn.Module;

/** The seed rank `rank` builds its replica from: different on every rank, so that the broadcast matters. */
export function modelSeed(spec: BucketSpec, rank: number): number {
  return deriveSeed(spec.seed, 21, rank);
}

/** A tanh MLP of `spec.sizes`. */
export const buildMlp: ModelBuilder = (spec, rank) => new nn.MLP(spec.sizes, { seed: modelSeed(spec, rank), activation: 'tanh' });

/** Every trainable tensor of a model, each once (a tied weight once), with its name, in `parameters()` order. */
export function namedUniqueParameters(model: nn.Module): [string, Tensor][] {
  const seen = new Set<Tensor>();
  return model.namedParameters().filter(([, p]) => !seen.has(p) && Boolean(seen.add(p)));
}

/** Each rank's part of step `step`'s batch: inputs [batchPerRank, inDim] and class labels; the parts are disjoint. */
export function rankBatch(spec: BucketSpec, step: number, rank: number): { x: Tensor; y: number[] } {
  const inDim = spec.sizes[0]!;
  const classes = spec.sizes[spec.sizes.length - 1]!;
  const gen = new Generator(deriveSeed(spec.seed, 23, step, rank));
  const x = Array.from({ length: spec.batchPerRank }, () => Array.from({ length: inDim }, () => gen.normal()));
  const y = Array.from({ length: spec.batchPerRank }, () => gen.int(classes));
  return { x: tensor(x), y };
}

/** Every trainable tensor after each step (in `namedUniqueParameters` order). */
export type Trajectory = Tensor[][];

/** Copies of the tensors' values now. */
export function snapshot(tensors: Tensor[]): Tensor[] {
  return tensors.map((t) => t.detach().clone());
}

/** The reference: one process trains rank 0's model on each step's combined batch (all parts, in rank order) with plain SGD. */
export function singleProcessTraining(spec: BucketSpec, worldSize: number, build: ModelBuilder, batch = rankBatch): Trajectory {
  const model = build(spec, 0);
  const params = namedUniqueParameters(model).map(([, p]) => p);
  const sgd = new optim.SGD(params, { lr: spec.lr });
  const out: Trajectory = [];
  for (let s = 0; s < spec.steps; s++) {
    const parts = Array.from({ length: worldSize }, (_, r) => batch(spec, s, r));
    sgd.zeroGrad();
    nn.crossEntropy(model.forward(Tensor.cat(parts.map((p) => p.x))), parts.flatMap((p) => p.y)).backward();
    sgd.step();
    out.push(snapshot(params));
  }
  return out;
}

/** A bucket of the README's rule: the names of its parameters and its gradient elements. */
export interface ExpectedBucket {
  names: string[];
  elements: number;
}

/**
 * The buckets of the README's rule, in launch order: the distinct
 * parameters in reverse order of `parameters()` (about the order in which
 * backward completes their gradients), each joining the open bucket, which
 * closes once it holds at least `bucketBytes` of float32 gradients; the
 * last bucket holds what is left.
 */
export function expectedBuckets(model: nn.Module, bucketBytes: number): ExpectedBucket[] {
  const out: ExpectedBucket[] = [];
  let open: ExpectedBucket = { names: [], elements: 0 };
  for (const [name, p] of namedUniqueParameters(model).reverse()) {
    open.names.push(name);
    open.elements += p.numel;
    if (open.elements * 4 >= bucketBytes) {
      out.push(open);
      open = { names: [], elements: 0 };
    }
  }
  if (open.names.length > 0) out.push(open);
  return out;
}
