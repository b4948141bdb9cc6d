/**
 * Rank programs of the ex06 checks: they run in the rank workers, build the
 * model and this rank's micro-batches, call the submission once per step,
 * and return copies of the gradients it left and of the parameters after
 * each SGD step.
 *
 * Before each step, and after the last, every rank passes a secret fence
 * (../ex07-zero-stage-2/fences.ts): an empty message to itself whose tag the
 * check derives from its mark key for this launch and hands over in args, so
 * that the checks can tell from the trace what each step sent, and a
 * submission cannot send a fence of its own to move traffic out of a step.
 */
import type { Comm } from '@dtlab/runtime';
import { optim, zeros, type Tensor, type nn } from '@dtlab/tensor';
import { loadExport, fencer } from '@dtlab/grader';
import { makeModel, microBatch, snapshot, type AccumulationRun, type AccumulationSpec } from './data.ts';

type AccumulateGradients = (comm: Comm, model: nn.Module, microBatches: { x: Tensor; y: number[] }[]) => Promise<void>;

/**
 * Trains with the submission's accumulateGradients: per step, every `.grad`
 * cleared, the submission called on this rank's micro-batches, the gradients
 * copied (a parameter left without one as an empty tensor, which the check
 * names), then a plain SGD step.
 */
export async function accumulateSteps(comm: Comm, entry: string, spec: AccumulationSpec, fences: number[]): Promise<AccumulationRun> {
  // Bound before the submission loads: it cannot hold a fence back or send one early.
  const fence = fencer(comm, fences);
  const accumulateGradients = await loadExport<AccumulateGradients>(entry, 'accumulateGradients');
  const model = makeModel(spec);
  const params = model.parameters();
  const sgd = new optim.SGD(params, { lr: spec.lr });
  const out: AccumulationRun = { grads: [], params: [] };
  for (let s = 0; s < spec.lengths.length; s++) {
    await fence(s);
    const batches = spec.lengths[s]![comm.rank]!.map((_, i) => microBatch(spec, s, comm.rank, i));
    sgd.zeroGrad();
    await accumulateGradients(comm, model, batches);
    out.grads.push(params.map((p) => (p.grad ? p.grad.detach().clone() : zeros([0]))));
    sgd.step();
    out.params.push(snapshot(params));
  }
  await fence(spec.lengths.length);
  return out;
}
