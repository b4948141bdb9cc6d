/**
 * Rank programs of the ex03 public checks: they run in the rank workers,
 * drive the submission's ZeroAdamW with known gradients, and return the
 * parameters and the size of the optimizer state.
 */
import type { Comm } from '@dtlab/runtime';
import { retainedBytes } from '@dtlab/runtime';
import { flattenTensors, type Tensor, type optim } from '@dtlab/tensor';
import { loadExport } from '@dtlab/grader/program';
import { initialParams, rankGrads, type GradSpec } from './data.ts';

/** The submission's class, as the rank programs use it. */
export type ZeroAdamWClass = new (comm: Comm, params: Tensor[], opts: optim.AdamOptions) => { state: unknown; step(): Promise<void> };

/** What a rank returns: after each step, its parameters (flat) and `retainedBytes(optimizer.state)`. */
export interface StepsResult {
  params: Tensor[];
  stateBytes: number[];
}

/** Sets this rank's gradients and steps the submission's optimizer, `spec.steps` times. */
export async function zeroSteps(comm: Comm, entry: string, spec: GradSpec): Promise<StepsResult> {
  const ZeroAdamW = await loadExport<ZeroAdamWClass>(entry, 'ZeroAdamW');
  const params = initialParams(spec);
  const optimizer = new ZeroAdamW(comm, params, spec.opts);
  const out: StepsResult = { params: [], stateBytes: [] };
  for (let s = 0; s < spec.steps; s++) {
    rankGrads(spec, comm.rank, s).forEach((g, i) => (params[i]!.grad = g));
    await optimizer.step();
    out.params.push(flattenTensors(params));
    out.stateBytes.push(retainedBytes(optimizer.state));
  }
  return out;
}
