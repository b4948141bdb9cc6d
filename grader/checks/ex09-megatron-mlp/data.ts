/**
 * Inputs of the ex09 checks, made from a seed, and the unsharded MLP they
 * are compared with. Rank programs (in the rank workers) and checks (in the
 * grading process) both call these, so the checker knows the weights, the
 * input and the upstream gradient without receiving them from student code.
 *
 * Everything is float64: the sharded and the unsharded MLP add the same
 * products in a different order (the all-reduce sums the ranks' partial
 * products after each rank summed its own hidden units), which float64
 * rounds at about 1e-15 relative, so a tolerance of 1e-9 has nothing to
 * absorb but a real mistake.
 */
import { Generator, Tensor, chunkBounds, deriveSeed, tensor } from '@dtlab/tensor';

/** One MLP and one batch: sizes and the seed of its values. */
export interface MLPSpec {
  seed: number;
  /** Tokens (rows of x). */
  batch: number;
  /** Input features D, hidden units H, output features O. */
  inDim: number;
  hidden: number;
  outDim: number;
}

/** The unsharded weights, in nn.Linear's layout. */
export interface FullWeights {
  w1: Tensor;
  b1: Tensor;
  w2: Tensor;
  b2: Tensor;
}

/** The unsharded MLP's output and gradients for a loss sum(y ⊙ upstream). */
export interface Reference {
  y: Tensor;
  x: Tensor;
  w1: Tensor;
  b1: Tensor;
  w2: Tensor;
  b2: Tensor;
}

const DTYPE = 'float64' as const;

function normal(gen: Generator, shape: number[], scale: number): Tensor {
  const n = shape.reduce((a, b) => a * b, 1);
  return tensor(Array.from({ length: n }, () => gen.normal() * scale), { shape, dtype: DTYPE });
}

/** The unsharded weights (the same on every rank): scaled like nn.Linear's initialisation, so GeLU sees values of order 1. */
export function fullWeights(spec: MLPSpec): FullWeights {
  const gen = new Generator(deriveSeed(spec.seed, 1));
  return {
    w1: normal(gen, [spec.hidden, spec.inDim], 1 / Math.sqrt(spec.inDim)),
    b1: normal(gen, [spec.hidden], 0.5),
    w2: normal(gen, [spec.outDim, spec.hidden], 1 / Math.sqrt(spec.hidden)),
    b2: normal(gen, [spec.outDim], 0.5),
  };
}

/** The input x [batch, inDim], the same on every rank. */
export function input(spec: MLPSpec): Tensor {
  return normal(new Generator(deriveSeed(spec.seed, 2)), [spec.batch, spec.inDim], 1);
}

/** The gradient of the loss with respect to y: the loss is sum(y ⊙ upstream). */
export function upstream(spec: MLPSpec): Tensor {
  return normal(new Generator(deriveSeed(spec.seed, 3)), [spec.batch, spec.outDim], 1);
}

/** GeLU in the tanh form (the exercise's contract), written out here so that the reference depends on no submission. */
export function gelu(x: Tensor): Tensor {
  const inner = x.add(x.pow(3).mul(0.044715)).mul(Math.sqrt(2 / Math.PI));
  return x.mul(inner.tanh().add(1)).mul(0.5);
}

/** The unsharded MLP y = GeLU(x·W1ᵀ + b1)·W2ᵀ + b2 (differentiable in whatever requires grad). */
export function mlp(x: Tensor, w: FullWeights): Tensor {
  return gelu(x.matmul(w.w1.transpose(0, 1)).add(w.b1)).matmul(w.w2.transpose(0, 1)).add(w.b2);
}

function leaf(t: Tensor): Tensor {
  const p = t.detach().clone();
  p.requiresGrad = true;
  return p;
}

/** The unsharded MLP on the spec's input: its output and every gradient, in one process. */
export function reference(spec: MLPSpec): Reference {
  const full = fullWeights(spec);
  const w = { w1: leaf(full.w1), b1: leaf(full.b1), w2: leaf(full.w2), b2: leaf(full.b2) };
  const x = leaf(input(spec));
  const y = mlp(x, w);
  y.mul(upstream(spec)).sum().backward();
  return { y: y.detach(), x: x.grad!, w1: w.w1.grad!, b1: w.b1.grad!, w2: w.w2.grad!, b2: w.b2.grad! };
}

/** Rank `rank`'s hidden units of `hidden` on `worldSize` ranks: the exercise's split rule. */
export function hiddenShard(hidden: number, worldSize: number, rank: number): { start: number; end: number } {
  return chunkBounds(hidden, worldSize)[rank]!;
}
