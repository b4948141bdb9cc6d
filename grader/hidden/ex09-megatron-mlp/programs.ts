/**
 * Rank programs of the ex09 hidden checks (run in the rank workers).
 */
import type { Comm } from '@dtlab/runtime';
import { Tensor, flattenTensors, nn, optim } from '@dtlab/tensor';
import { loadExport } from '@dtlab/grader';
import { fullWeights } from '../../checks/ex09-megatron-mlp/data.ts';
import { PARAMS, copies, type ParallelMLPClass } from '../../checks/ex09-megatron-mlp/programs.ts';
import { batchOf, makePre, type Training } from './training.ts';

/** What a rank hands back after each step: its pre layer's parameters (flat) and its four MLP shards. */
export interface TrainingResult {
  pre: Tensor[];
  w1: Tensor[];
  b1: Tensor[];
  w2: Tensor[];
  b2: Tensor[];
}

/**
 * Trains the replicated pre layer and the submission's ParallelMLP with SGD
 * (the check's own optimizer, over the model's documented parameter fields)
 * on the same batch on every rank, `t.steps` steps.
 */
export async function mlpTraining(comm: Comm, entry: string, t: Training): Promise<TrainingResult> {
  const ParallelMLP = await loadExport<ParallelMLPClass>(entry, 'ParallelMLP');
  const pre = makePre(t);
  const model = new ParallelMLP(comm, copies(fullWeights(t.mlp)));
  const fields = model as unknown as Record<string, unknown>;
  const shards = PARAMS.map((name) => {
    const p = fields[name];
    if (!(p instanceof Tensor) || !p.requiresGrad) throw new TypeError(`ParallelMLP.${name} must be a leaf tensor that requires grad (this rank's shard), but it is ${p instanceof Tensor ? 'a tensor that does not require grad' : typeof p}`);
    return p;
  });
  const opt = new optim.SGD([...pre.parameters(), ...shards], { lr: t.lr });
  const out: TrainingResult = { pre: [], w1: [], b1: [], w2: [], b2: [] };
  for (let s = 0; s < t.steps; s++) {
    const { x, target } = batchOf(t, s);
    opt.zeroGrad();
    const y = await model.forward(pre.forward(x).tanh());
    if (!(y instanceof Tensor)) throw new TypeError(`ParallelMLP.forward must resolve to a Tensor, but it resolved to ${typeof y}`);
    await nn.mseLoss(y, target).backwardAsync();
    opt.step();
    out.pre.push(flattenTensors(pre.parameters()));
    PARAMS.forEach((name, i) => out[name].push(shards[i]!.detach().clone()));
  }
  return out;
}
