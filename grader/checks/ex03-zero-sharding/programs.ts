/**
 * Rank programs of the ex03 public checks: they run in the rank workers,
 * drive the submission's ZeroAdamW with known gradients, and return the
 * parameters after each step and, when asked, the optimizer's checkpoint.
 */
import type { Comm } from '@dtlab/runtime';
import { flattenTensors, noGrad, unflattenTensors, type Tensor, type optim } from '@dtlab/tensor';
import { loadExport } from '@dtlab/grader';
import { fingerprintOf, initialParams, rankGrads, type GradSpec } from './data.ts';

/** The submission's class, as the rank programs use it. */
export type ZeroAdamWClass = new (comm: Comm, params: Tensor[], opts: optim.AdamOptions) => { step(): Promise<void>; stateDict(): unknown; loadStateDict(dict: unknown): void };

/** What a rank returns: its parameters (flat) after each step, and its checkpoint if one was asked for. */
export interface StepsResult {
  params: Tensor[];
  checkpoint?: unknown;
}

/** Sets this rank's gradients (null where the spec says so) for step `s`. */
function setGrads(params: Tensor[], spec: GradSpec, rank: number, s: number): void {
  rankGrads(spec, rank, s).forEach((g, i) => (params[i]!.grad = g));
}

/** Sets this rank's gradients and steps the submission's optimizer, `spec.steps` times; saves a checkpoint after `spec.checkpointAfter` steps. */
export async function zeroSteps(comm: Comm, entry: string, spec: GradSpec): Promise<StepsResult> {
  const ZeroAdamW = await loadExport<ZeroAdamWClass>(entry, 'ZeroAdamW');
  const params = initialParams(spec);
  const optimizer = new ZeroAdamW(comm, params, spec.opts);
  const out: StepsResult = { params: [] };
  for (let s = 0; s < spec.steps; s++) {
    setGrads(params, spec, comm.rank, s);
    await optimizer.step();
    out.params.push(flattenTensors(params));
    if (s + 1 === spec.checkpointAfter) out.checkpoint = optimizer.stateDict();
  }
  return out;
}

/**
 * Resumes training from a checkpoint, on workers that never ran the
 * submission: the parameters after `spec.checkpointAfter` steps (`start`,
 * flat, the same on every rank), a fresh optimizer that loads this rank's
 * checkpoint, then the remaining steps. State kept anywhere but in the
 * checkpoint is not here, so a run that needed it goes wrong.
 */
export async function resumeSteps(comm: Comm, entry: string, spec: GradSpec, start: Tensor, checkpoints: unknown[]): Promise<StepsResult> {
  const ZeroAdamW = await loadExport<ZeroAdamWClass>(entry, 'ZeroAdamW');
  const params = initialParams(spec);
  const values = unflattenTensors(start, spec.shapes);
  noGrad(() => params.forEach((p, i) => p.copy_(values[i]!)));
  const optimizer = new ZeroAdamW(comm, params, spec.opts);
  const mine = checkpoints[comm.rank];
  const loaded = fingerprintOf(mine);
  optimizer.loadStateDict(mine);
  const out: StepsResult = { params: [] };
  for (let s = spec.checkpointAfter ?? 0; s < spec.steps; s++) {
    setGrads(params, spec, comm.rank, s);
    await optimizer.step();
    out.params.push(flattenTensors(params));
  }
  expectCheckpointKept(mine, loaded);
  return out;
}

/**
 * Throws unless the checkpoint a rank loaded is as it was: `loadStateDict`
 * must copy what it restores. An optimizer that adopts the checkpoint's own
 * tensors as its state changes the checkpoint with every later step, so a
 * second load of it (a retry, a rollback) would resume from a later state.
 */
export function expectCheckpointKept(checkpoint: unknown, loaded: string): void {
  if (fingerprintOf(checkpoint) !== loaded) {
    throw new Error('the checkpoint this rank loaded changed during the steps after loadStateDict: it kept the checkpoint\'s own tensors as its state, so a second load would resume from a later state; copy them into the optimizer\'s state instead');
  }
}
