/**
 * Rank programs of the ex06 checks: they run in the rank workers, build the
 * model and this rank's micro-batches, call the submission once per step,
 * and return copies of the gradients it left and of the parameters after
 * each SGD step.
 *
 * Before each step every rank sends itself an empty "fence" message tagged
 * FENCE_TAG + step, so that the checks can tell from the trace which
 * collective calls each step made.
 */
import type { Comm } from '@dtlab/runtime';
import { optim, zeros, type Tensor, type nn } from '@dtlab/tensor';
import { loadExport } from '@dtlab/grader';
import { makeModel, microBatch, snapshot, type AccumulationRun, type AccumulationSpec } from './data.ts';

/** Tag of the fence before step s: FENCE_TAG + s (below the collectives' tags, 2^30 and up). */
export const FENCE_TAG = 1_000_000_000;

type AccumulateGradients = (comm: Comm, model: nn.Module, microBatches: { x: Tensor; y: number[] }[]) => Promise<void>;

/**
 * Trains with the submission's accumulateGradients: per step, every `.grad`
 * cleared, the submission called on this rank's micro-batches, the gradients
 * copied (a parameter left without one as an empty tensor, which the check
 * names), then a plain SGD step.
 */
export async function accumulateSteps(comm: Comm, entry: string, spec: AccumulationSpec): Promise<AccumulationRun> {
  const accumulateGradients = await loadExport<AccumulateGradients>(entry, 'accumulateGradients');
  const model = makeModel(spec);
  const params = model.parameters();
  const sgd = new optim.SGD(params, { lr: spec.lr });
  const out: AccumulationRun = { grads: [], params: [] };
  for (let s = 0; s < spec.lengths.length; s++) {
    comm.isend(comm.rank, zeros([0]), { tag: FENCE_TAG + s });
    await comm.recv(comm.rank, { tag: FENCE_TAG + s });
    const batches = spec.lengths[s]![comm.rank]!.map((_, i) => microBatch(spec, s, comm.rank, i));
    sgd.zeroGrad();
    await accumulateGradients(comm, model, batches);
    out.grads.push(params.map((p) => (p.grad ? p.grad.detach().clone() : zeros([0]))));
    sgd.step();
    out.params.push(snapshot(params));
  }
  return out;
}
