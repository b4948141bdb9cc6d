/**
 * The training experiment of the ex09 hidden checks, shared by the rank
 * program and the checks: a replicated layer before the tensor-parallel MLP
 * (so that a partial input gradient shows as a layer that trains wrong),
 * and the same model trained by SGD in one process.
 */
import { Generator, Tensor, deriveSeed, flattenTensors, nn, optim, tensor } from '@dtlab/tensor';
import { fullWeights, mlp, type FullWeights, type MLPSpec } from '../../checks/ex09-megatron-mlp/data.ts';

/** The model: Linear(inputs → D) and tanh, replicated on every rank, then the MLP D → H → O; MSE against a seeded target. */
export interface Training {
  mlp: MLPSpec;
  /** Features of the data, before the first layer. */
  inputs: number;
  steps: number;
  lr: number;
}

const DTYPE = 'float64' as const;

/** The layer before the MLP (the same on every rank: same seed). */
export function makePre(t: Training): nn.Linear {
  return new nn.Linear(t.inputs, t.mlp.inDim, { seed: deriveSeed(t.mlp.seed, 10), dtype: DTYPE });
}

/** The batch of step `step`, the same on every rank (tensor-parallel ranks see the same data). */
export function batchOf(t: Training, step: number): { x: Tensor; target: Tensor } {
  const gen = new Generator(deriveSeed(t.mlp.seed, 11, step));
  const draw = (shape: number[]) => tensor(Array.from({ length: shape[0]! * shape[1]! }, () => gen.normal()), { shape, dtype: DTYPE });
  return { x: draw([t.mlp.batch, t.inputs]), target: draw([t.mlp.batch, t.mlp.outDim]) };
}

/** What every rank must hold after each step, in one process: the pre layer's parameters (flat) and the unsharded MLP weights. */
export interface ReferenceStep {
  pre: Tensor;
  mlp: FullWeights;
}

/** SGD on the whole model in one process, `t.steps` steps. */
export function singleProcessTraining(t: Training): ReferenceStep[] {
  const pre = makePre(t);
  const full = fullWeights(t.mlp);
  const w = Object.fromEntries(Object.entries(full).map(([k, v]) => {
    const p = v.clone();
    p.requiresGrad = true;
    return [k, p];
  })) as unknown as FullWeights;
  const opt = new optim.SGD([...pre.parameters(), w.w1, w.b1, w.w2, w.b2], { lr: t.lr });
  const out: ReferenceStep[] = [];
  for (let s = 0; s < t.steps; s++) {
    const { x, target } = batchOf(t, s);
    opt.zeroGrad();
    nn.mseLoss(mlp(pre.forward(x).tanh(), w), target).backward();
    opt.step();
    out.push({ pre: flattenTensors(pre.parameters()), mlp: { w1: w.w1.detach().clone(), b1: w.b1.detach().clone(), w2: w.w2.detach().clone(), b2: w.b2.detach().clone() } });
  }
  return out;
}
