/**
 * The training experiment of the ex07 checks, shared by the rank programs
 * (in the rank workers) and the checks (in the grading process): a seeded
 * deep, narrow MLP, each rank's mini-batch of a seeded data set at each step,
 * and the single-process reference the checks compare with. Every check
 * computes what it expects from these at grade time.
 */
import { Generator, Tensor, deriveSeed, flattenTensors, nn, optim, tensor, zeros } from '@dtlab/tensor';

/** One training run: the model, the data, the optimizer's options. */
export interface Experiment {
  seed: number;
  /** Layer sizes of the MLP (tanh between the layers). */
  sizes: number[];
  /** Examples per rank per step. */
  batchPerRank: number;
  steps: number;
  opts: Required<optim.AdamOptions>;
  /** Zero2AdamW's bucket size, in bytes. */
  bucketBytes: number;
  /**
   * Extra parameters, in elements, handed to the optimizer after the model's
   * own but used by no forward pass: their `.grad` stays null in every step,
   * which counts as a zero gradient (as in torch, a parameter that gets no
   * gradient).
   */
  unused?: number[];
  /** Every rank saves a checkpoint (`stateDict()`) after this many steps. */
  checkpointAfter?: number;
}

/**
 * AdamW options of the checks. eps is large next to the gradients on
 * purpose: Adam's update g/|g| cannot tell a mean from a sum, but
 * m̂/(√v̂ + eps) can when eps matters. It also keeps float32 rounding of a
 * near-zero gradient from flipping an update.
 */
export const CHECK_OPTIONS: Required<optim.AdamOptions> = { lr: 0.01, betas: [0.9, 0.99], eps: 1e-3, weightDecay: 0.1 };

/** Bytes per element of the parameters, gradients and moments (float32). */
export const BYTES_PER_ELEMENT = 4;

/** The model every rank starts from (the same on all ranks: same seed). */
export function makeModel(e: Experiment): nn.MLP {
  return new nn.MLP(e.sizes, { seed: e.seed, activation: 'tanh' });
}

/** The parameters handed to the optimizer: the model's, then the unused ones (seeded, the same on every rank). */
export function optimizerParams(e: Experiment, model: nn.MLP): Tensor[] {
  const gen = new Generator(deriveSeed(e.seed, 7));
  const unused = (e.unused ?? []).map((n) => tensor(Array.from({ length: n }, () => gen.normal() / 4), { requiresGrad: true }));
  return [...model.parameters(), ...unused];
}

/** The parameters' names and shapes, to report a wrong value as `4.weight[3, 5]` rather than a flat index. */
export function paramLayout(e: Experiment): { names: string[]; shapes: number[][] } {
  const named = makeModel(e).namedParameters();
  const unused = e.unused ?? [];
  return {
    names: [...named.map(([n]) => n), ...unused.map((_, i) => `unused[${i}]`)],
    shapes: [...named.map(([, p]) => [...p.shape]), ...unused.map((n) => [n])],
  };
}

/** Total parameter elements P handed to the optimizer. */
export function paramCount(e: Experiment): number {
  return paramLayout(e).shapes.reduce((n, s) => n + s.reduce((a, b) => a * b, 1), 0);
}

/** The largest parameter, in elements. */
export function largestParam(e: Experiment): number {
  return Math.max(...paramLayout(e).shapes.map((s) => s.reduce((a, b) => a * b, 1)));
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
 * (worldSize · batchPerRank examples a step) with optim.AdamW over the same
 * parameters. Returns the flat parameters after every step.
 */
export function singleProcessTraining(e: Experiment, worldSize: number): Tensor[] {
  const model = makeModel(e);
  const params = optimizerParams(e, model);
  const adamw = new optim.AdamW(params, e.opts);
  const after: Tensor[] = [];
  for (let s = 0; s < e.steps; s++) {
    const batches = Array.from({ length: worldSize }, (_, r) => miniBatch(e, r, s));
    for (const p of params) p.grad = null;
    nn.crossEntropy(model.forward(Tensor.cat(batches.map((b) => b.x))), batches.flatMap((b) => b.y)).backward();
    // optim.AdamW skips a parameter whose grad is null, as torch does; the exercise's contract, like exercise 3's, counts it as a zero gradient.
    for (const p of params) p.grad ??= zeros([...p.shape]);
    adamw.step();
    after.push(flattenTensors(params));
  }
  return after;
}
