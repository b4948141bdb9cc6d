/**
 * Rank programs of the ex03 public checks: they run in the rank workers,
 * drive the submission's ZeroAdamW with known gradients, and return the
 * parameters after each step and, when asked, the optimizer's checkpoint.
 */
import type { Comm } from '@dtlab/runtime';
import { Tensor, flattenTensors, noGrad, unflattenTensors, type optim } from '@dtlab/tensor';
import { loadExport } from '@dtlab/grader';
import { fingerprintOf, initialParams, rankGrads, type GradSpec } from './data.ts';

/** The submission's class, as the rank programs use it. */
export type ZeroAdamWClass = new (comm: Comm, params: Tensor[], opts: optim.AdamOptions) => { step(): Promise<void>; stateDict(): unknown; loadStateDict(dict: unknown): void };

/**
 * A checkpoint as the checks read it: the documented fields of a
 * ZeroStateDict, copied into fresh tensors in this rank, and the names of any
 * other fields (which a ZeroStateDict has not). `invalid` says why the
 * checkpoint is not a ZeroStateDict at all. Nothing else of what stateDict()
 * returned leaves the rank: no shared memory, no BigInt, no object the
 * checker would have to walk.
 */
export type SavedCheckpoint =
  | { step: number; expAvg: Tensor; expAvgSq: Tensor; dtypes: string[]; extra: string[]; changedAfterSave?: string }
  | { invalid: string };

/** What a rank returns: its parameters (flat) after each step, and its checkpoint if one was asked for. */
export interface StepsResult {
  params: Tensor[];
  checkpoint?: SavedCheckpoint;
}

/** What `v` is, briefly, for a message about a checkpoint field. */
function kindOf(v: unknown): string {
  if (v === null) return 'null';
  if (v instanceof Tensor) return `a ${v.dtype} tensor`;
  return typeof v === 'object' ? (Array.isArray(v) ? 'an array' : 'an object') : `a ${typeof v}`;
}

/**
 * Reads what `stateDict()` returned, once, into a SavedCheckpoint: `step` a
 * whole number, `expAvg` and `expAvgSq` tensors (copied, flat), and the names
 * of any other own fields, bounded.
 */
export function saveCheckpoint(dict: unknown): SavedCheckpoint {
  if (dict === null || typeof dict !== 'object' || Array.isArray(dict) || dict instanceof Tensor) return { invalid: `stateDict() returned ${kindOf(dict)}, not an object { step, expAvg, expAvgSq }` };
  const d = dict as Record<string, unknown>;
  const step = d['step'];
  const m = d['expAvg'];
  const v = d['expAvgSq'];
  if (typeof step !== 'number' || !Number.isInteger(step) || step < 0) return { invalid: `its step is ${kindOf(step)}${typeof step === 'number' ? ` (${step})` : ''}, where a ZeroStateDict has the number of steps taken` };
  if (!(m instanceof Tensor) || !(v instanceof Tensor)) return { invalid: `its expAvg is ${kindOf(m)} and its expAvgSq ${kindOf(v)}, where a ZeroStateDict has two tensors` };
  const extra = Reflect.ownKeys(d)
    .filter((k) => k !== 'step' && k !== 'expAvg' && k !== 'expAvgSq')
    .slice(0, 10)
    .map((k) => String(k).slice(0, 60));
  const flat = (t: Tensor) => noGrad(() => t.reshape([t.numel]).clone().to('float32'));
  return { step, expAvg: flat(m), expAvgSq: flat(v), dtypes: [m.dtype, v.dtype], extra };
}

/**
 * After the steps that follow a save: says which field of the object
 * stateDict() returned no longer holds what was saved (a dict that aliases
 * the live state becomes a later step's state as training goes on), or
 * undefined when it still holds it. Reads only the three documented fields.
 */
export function changedSinceSave(dict: unknown, saved: SavedCheckpoint): string | undefined {
  if ('invalid' in saved) return undefined;
  try {
    const d = dict as Record<string, unknown>;
    if (d['step'] !== saved.step) return `its step became ${typeof d['step'] === 'number' ? d['step'] : 'something else'}`;
    for (const [name, was] of [['expAvg', saved.expAvg], ['expAvgSq', saved.expAvgSq]] as const) {
      const now = d[name];
      if (!(now instanceof Tensor) || now.numel !== was.numel) return `its ${name} is no longer the tensor it was`;
      const bits = (t: Tensor) => new Uint32Array(Float32Array.from(t.to('float32').toArray().flat(Infinity as 1) as number[]).buffer);
      const a = bits(was);
      const b = bits(now);
      for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return `its ${name}[${i}] changed from ${was.toArray().flat(Infinity as 1)[i]} to ${now.toArray().flat(Infinity as 1)[i]}`;
    }
    return undefined;
  } catch (e) {
    return `reading it again threw (${String((e as Error)?.message ?? e).slice(0, 200)})`;
  }
}

/** The checkpoint a fresh optimizer loads: exactly a ZeroStateDict, made of what saveCheckpoint kept. */
export function loadableCheckpoint(saved: SavedCheckpoint): { step: number; expAvg: Tensor; expAvgSq: Tensor } {
  if ('invalid' in saved) throw new Error(`BUG: an invalid checkpoint reached the resumed run: ${saved.invalid}`);
  return { step: saved.step, expAvg: saved.expAvg.clone(), expAvgSq: saved.expAvgSq.clone() };
}

/** Records in the saved checkpoint whether the object stateDict() returned changed during the steps after it (see changedSinceSave). */
export function markChangedSinceSave(out: StepsResult, dict: unknown): void {
  if (out.checkpoint === undefined || 'invalid' in out.checkpoint) return;
  const changed = changedSinceSave(dict, out.checkpoint);
  if (changed !== undefined) out.checkpoint.changedAfterSave = changed.slice(0, 300);
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
  let dict: unknown;
  for (let s = 0; s < spec.steps; s++) {
    setGrads(params, spec, comm.rank, s);
    await optimizer.step();
    out.params.push(flattenTensors(params));
    if (s + 1 === spec.checkpointAfter) out.checkpoint = saveCheckpoint((dict = optimizer.stateDict()));
  }
  markChangedSinceSave(out, dict);
  return out;
}

/**
 * Resumes training from a checkpoint, on workers that never ran the
 * submission: the parameters after `spec.checkpointAfter` steps (`start`,
 * flat, the same on every rank), a fresh optimizer that loads this rank's
 * checkpoint, then the remaining steps. State kept anywhere but in the
 * checkpoint is not here, so a run that needed it goes wrong.
 */
export async function resumeSteps(comm: Comm, entry: string, spec: GradSpec, start: Tensor, checkpoints: SavedCheckpoint[]): Promise<StepsResult> {
  const ZeroAdamW = await loadExport<ZeroAdamWClass>(entry, 'ZeroAdamW');
  const params = initialParams(spec);
  const values = unflattenTensors(start, spec.shapes);
  noGrad(() => params.forEach((p, i) => p.copy_(values[i]!)));
  const optimizer = new ZeroAdamW(comm, params, spec.opts);
  const mine = loadableCheckpoint(checkpoints[comm.rank]!);
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
