/**
 * The training experiment of the ex08 checks, shared by the rank programs
 * (in the rank workers) and the checks (in the grading process): a seeded
 * MLP whose Linear layers are the FSDP units, each rank's mini-batch of a
 * seeded data set at each step, and the single-process reference the checks
 * compare with, as each rank's shards. Every check computes what it expects
 * from these at grade time.
 */
import { Generator, Tensor, cat, chunkBounds, deriveSeed, nn, optim, tensor } from '@dtlab/tensor';

/** One training run: the model, the data, the optimizer's options. */
export interface Experiment {
  seed: number;
  /** Layer sizes of the MLP (tanh between the layers); each Linear is one unit. */
  sizes: number[];
  /** Examples per rank per step. */
  batchPerRank: number;
  steps: number;
  opts: Required<optim.AdamOptions>;
}

/**
 * AdamW options of the checks. eps is large next to the gradients on
 * purpose: Adam's update g/|g| cannot tell a mean from a sum, but
 * m̂/(√v̂ + eps) can when eps matters.
 */
export const CHECK_OPTIONS: Required<optim.AdamOptions> = { lr: 0.01, betas: [0.9, 0.99], eps: 1e-3, weightDecay: 0.1 };

/** Bytes per element of the parameters and gradients (float32). */
export const BYTES_PER_ELEMENT = 4;

/** The model every rank starts from (the same on all ranks: same seed). */
export function makeModel(e: Experiment): nn.MLP {
  return new nn.MLP(e.sizes, { seed: e.seed, activation: 'tanh' });
}

/** A unit's shape: the Linear it wraps, and its n = out·in + out flat parameters. */
export interface Unit {
  /** Its index in the MLP's layers (0, 2, 4, ...: the Linear layers), as in its parameters' names. */
  layer: number;
  inFeatures: number;
  outFeatures: number;
  n: number;
}

/** The units of `e`'s model, in order. */
export function unitsOf(e: Experiment): Unit[] {
  return e.sizes.slice(0, -1).map((inFeatures, i) => {
    const outFeatures = e.sizes[i + 1]!;
    return { layer: 2 * i, inFeatures, outFeatures, n: outFeatures * inFeatures + outFeatures };
  });
}

/** Total parameter elements P (Ψ). */
export function paramCount(e: Experiment): number {
  return unitsOf(e).reduce((s, u) => s + u.n, 0);
}

/** Rank `rank`'s shard sizes, one per unit: `chunkBounds(n, N)[rank]`. */
export function shardSizes(e: Experiment, worldSize: number, rank: number): number[] {
  return unitsOf(e).map((u) => {
    const b = chunkBounds(u.n, worldSize)[rank]!;
    return b.end - b.start;
  });
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

/** Each unit's flat parameters [W row by row, b] of `model`, or of its gradients. */
function flatUnits(model: nn.MLP, grads: boolean): Tensor[] {
  const linears = model.layers.filter((l): l is nn.Linear => l instanceof nn.Linear);
  return linears.map((l) => {
    const w = grads ? l.weight.grad! : l.weight;
    const b = grads ? l.bias!.grad! : l.bias!;
    return cat([w.detach().reshape([w.numel]), b.detach()]);
  });
}

/** What one process does in one step, per unit: the mean gradient (before the update) and the parameters after it. */
export interface ReferenceStep {
  grads: Tensor[];
  params: Tensor[];
}

/**
 * The reference: one process trains the MLP on the union of all ranks'
 * mini-batches (worldSize · batchPerRank examples a step) with optim.AdamW.
 * Per step, each unit's flat gradient and flat parameters after the step.
 */
export function singleProcessTraining(e: Experiment, worldSize: number): ReferenceStep[] {
  const model = makeModel(e);
  const adamw = new optim.AdamW(model.parameters(), e.opts);
  const steps: ReferenceStep[] = [];
  for (let s = 0; s < e.steps; s++) {
    const batches = Array.from({ length: worldSize }, (_, r) => miniBatch(e, r, s));
    model.zeroGrad();
    nn.crossEntropy(model.forward(Tensor.cat(batches.map((b) => b.x))), batches.flatMap((b) => b.y)).backward();
    const grads = flatUnits(model, true);
    adamw.step();
    steps.push({ grads, params: flatUnits(model, false) });
  }
  return steps;
}

/** Rank `rank`'s chunk of each of `flats` (one per unit), end to end: what the rank's shards must hold. */
export function rankShards(e: Experiment, flats: Tensor[], worldSize: number, rank: number): Tensor {
  return cat(
    unitsOf(e).map((u, k) => {
      const { start, end } = chunkBounds(u.n, worldSize)[rank]!;
      return flats[k]!.slice(0, start, end);
    }),
  );
}
