/**
 * Rank programs of the ex03 hidden checks (run in the rank workers).
 */
import type { Comm } from '@dtlab/runtime';
import { retainedBytes } from '@dtlab/runtime';
import { flattenTensors, nn } from '@dtlab/tensor';
import { loadExport } from '@dtlab/grader/program';
import { makeModel, miniBatch, type Experiment } from './experiment.ts';
import type { StepsResult, ZeroAdamWClass } from '../../checks/ex03-zero-sharding/programs.ts';

/**
 * Data-parallel training with the submission's ZeroAdamW: each step, local
 * gradients of the cross-entropy mean on this rank's mini-batch, then
 * `optimizer.step()`. Returns, after each step, the parameters and
 * `retainedBytes(optimizer.state)`.
 */
export async function zeroTraining(comm: Comm, entry: string, e: Experiment): Promise<StepsResult> {
  const ZeroAdamW = await loadExport<ZeroAdamWClass>(entry, 'ZeroAdamW');
  const model = makeModel(e);
  const optimizer = new ZeroAdamW(comm, model.parameters(), e.opts);
  const out: StepsResult = { params: [], stateBytes: [] };
  for (let s = 0; s < e.steps; s++) {
    const { x, y } = miniBatch(e, comm.rank, s);
    model.zeroGrad();
    nn.crossEntropy(model.forward(x), y).backward();
    await optimizer.step();
    out.params.push(flattenTensors(model.parameters()));
    out.stateBytes.push(retainedBytes(optimizer.state));
  }
  return out;
}
