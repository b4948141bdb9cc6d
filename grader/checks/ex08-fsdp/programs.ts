/**
 * Rank programs of the ex08 checks: they run in the rank workers, wrap every
 * Linear of the seeded MLP in the submission's FsdpLinear, train with the
 * checks' own AdamW over the shards, and return, per step, this rank's
 * shards after the step and their gradients before it. The memory program
 * also marks memory (with the check's key) around the sharding, after each
 * layer's forward, around each layer's backward (hooks of its own) and
 * after the backward, so that the device reports what the gathered
 * parameters took, wherever the submission kept them.
 */
import type { Comm } from '@dtlab/runtime';
import { memory } from '@dtlab/runtime';
import { Tensor, cat, nn, noGrad, optim, zeros } from '@dtlab/tensor';
import { loadExport, fencer } from '@dtlab/grader';
import { makeModel, miniBatch, shardSizes, unitsOf, type Experiment } from './data.ts';

/** What the programs use of the submission's FsdpLinear. */
export interface FsdpLayer {
  readonly shard: unknown;
  forward(x: Tensor): Promise<Tensor> | Tensor;
}
/** The submission's class, as the rank programs use it. */
export type FsdpLinearClass = new (comm: Comm, linear: nn.Linear) => FsdpLayer;

/** Labels of the memory program's marks. */
export const MARKS = {
  base: 'before the model',
  sharded: 'after sharding',
  beforeForward: 'before forward',
  forward: 'after the forward of layer',
  beforeBackward: 'before backward',
  backwardStarts: 'before the backward of layer',
  backwardDone: 'after the backward of layer',
  afterBackward: 'after backward',
} as const;

/**
 * Where the memory program measures: the step (from 0) it marks, the key of
 * its marks, and the tags of its fences (ex07's fences.ts): fence 0 after
 * that step's forward, just before its backward, fence 1 just after the
 * backward.
 */
export interface Measure {
  step: number;
  key: string;
  fences: number[];
}

/** The fences of a measured step: before the backward, after it. */
export const FENCES = { beforeBackward: 0, afterBackward: 1 } as const;

/** What a rank returns: per step, its shards (end to end) after the step and their gradients before it; and what was wrong with the gradients. */
export interface FsdpResult {
  params: Tensor[];
  grads: Tensor[];
  /** With a measure: its shards (end to end) before the measured step, what its gathers carry; else empty. */
  before: Tensor[];
  /** Per step, what was wrong with a shard's gradient (none, or not of the shard's shape), '' when nothing. */
  gradProblems: string[];
}

/**
 * Builds the model and wraps each Linear in the submission's FsdpLinear, in
 * a function of its own, so that the model (and its full parameters) is
 * garbage once it returns: what stays is what the submission kept. Checks
 * each shard: a 1-D leaf tensor of this rank's chunk that requires grad.
 */
function shardModel(FsdpLinear: FsdpLinearClass, comm: Comm, e: Experiment): { layers: FsdpLayer[]; shards: Tensor[] } {
  const linears = makeModel(e).layers.filter((l): l is nn.Linear => l instanceof nn.Linear);
  const sizes = shardSizes(e, comm.worldSize, comm.rank);
  const layers = linears.map((l) => new FsdpLinear(comm, l));
  const shards = layers.map((layer, k) => {
    const s = layer.shard;
    const u = unitsOf(e)[k]!;
    const what = `rank ${comm.rank}: the shard of layer ${u.layer} (${u.inFeatures} → ${u.outFeatures}, n = ${u.n} parameters, chunkBounds(${u.n}, ${comm.worldSize})[${comm.rank}] = ${sizes[k]} of them)`;
    if (!(s instanceof Tensor)) throw new TypeError(`${what} is not a tensor: FsdpLinear's shard must be a 1-D tensor that requires grad`);
    if (s.ndim !== 1 || s.numel !== sizes[k]) throw new RangeError(`${what} has shape [${s.shape.join(', ')}], not [${sizes[k]}]`);
    if (!s.requiresGrad || !s.isLeaf) throw new TypeError(`${what} must be a leaf tensor that requires grad, so that backward gives it a gradient and the optimizer can step it`);
    return s;
  });
  return { layers, shards };
}

/** Says what is wrong with `shards`' gradients after a backward pass ('' when nothing), and returns them end to end (zeros where missing or misshapen). */
function readGrads(shards: Tensor[], e: Experiment, rank: number): { flat: Tensor; problem: string } {
  const problems: string[] = [];
  const parts = shards.map((s, k) => {
    const g = s.grad;
    const name = `layer ${unitsOf(e)[k]!.layer}`;
    if (!(g instanceof Tensor)) {
      problems.push(`rank ${rank}: the shard of ${name} has no gradient after backward`);
      return zeros([s.numel]);
    }
    if (g.ndim !== 1 || g.numel !== s.numel) {
      problems.push(`rank ${rank}: the gradient of the shard of ${name} has shape [${g.shape.join(', ')}], where the shard has [${s.shape.join(', ')}]`);
      return zeros([s.numel]);
    }
    return noGrad(() => g.to('float32').reshape([s.numel]));
  });
  return { flat: parts.length ? noGrad(() => cat(parts)) : zeros([0]), problem: problems.slice(0, 3).join('; ') };
}

/**
 * One training step: gradients set to none, forward through the layers
 * (tanh between them), the cross-entropy mean, `await loss.backwardAsync()`,
 * then AdamW on the shards. With `key`, the marks (see MARKS): the hooks of
 * the backward marks are registered just before it and removed after it.
 */
async function trainStep(comm: Comm, layers: FsdpLayer[], shards: Tensor[], opt: optim.AdamW, e: Experiment, s: number, key?: string, fence?: (k: number) => Promise<void>): Promise<{ flat: Tensor; problem: string }> {
  for (const p of shards) p.grad = null;
  if (key !== undefined) await memory.mark(MARKS.beforeForward, { key });
  const { x, y } = miniBatch(e, comm.rank, s);
  const units = unitsOf(e);
  const outputs: Tensor[] = [];
  let h = x;
  for (const [k, layer] of layers.entries()) {
    const out = await layer.forward(h);
    const u = units[k]!;
    if (!(out instanceof Tensor) || out.ndim !== 2 || out.shape[0] !== e.batchPerRank || out.shape[1] !== u.outFeatures) {
      throw new TypeError(`rank ${comm.rank}: the forward of layer ${u.layer} (${u.inFeatures} → ${u.outFeatures}) on a batch of ${e.batchPerRank} must give a tensor of shape [${e.batchPerRank}, ${u.outFeatures}]${out instanceof Tensor ? `, not [${out.shape.join(', ')}]` : ''}`);
    }
    outputs.push(out);
    h = k + 1 < layers.length ? out.tanh() : out;
    if (key !== undefined) await memory.mark(`${MARKS.forward} ${u.layer}`, { key });
  }
  const loss = nn.crossEntropy(h, y);
  const removers: (() => void)[] = [];
  if (key !== undefined) {
    await memory.mark(MARKS.beforeBackward, { key });
    outputs.forEach((out, k) => {
      const name = units[k]!.layer;
      if (out.requiresGrad) removers.push(out.registerHook(() => memory.mark(`${MARKS.backwardStarts} ${name}`, { key }).then(() => undefined)));
      removers.push(shards[k]!.registerPostAccumulateGradHook(() => memory.mark(`${MARKS.backwardDone} ${name}`, { key }).then(() => undefined)));
    });
  }
  await fence?.(FENCES.beforeBackward);
  await loss.backwardAsync();
  await fence?.(FENCES.afterBackward);
  if (key !== undefined) {
    await memory.mark(MARKS.afterBackward, { key });
    for (const remove of removers) remove();
  }
  const grads = readGrads(shards, e, comm.rank);
  opt.step();
  return grads;
}

/**
 * Sharded training with the submission's FsdpLinear and AdamW over the
 * shards. With `measure`, marks before the model exists and after sharding,
 * and through step `measure.step` (see trainStep), fences around that
 * step's backward, and keeps only the last step's results, so that nothing
 * of its own sits between the marks.
 */
export async function fsdpTraining(comm: Comm, entry: string, e: Experiment, measure?: Measure): Promise<FsdpResult> {
  // Before the submission is loaded: the fence keeps the Comm's own methods.
  const fence = measure ? fencer(comm, measure.fences) : undefined;
  const FsdpLinear = await loadExport<FsdpLinearClass>(entry, 'FsdpLinear');
  if (measure) await memory.mark(MARKS.base, { key: measure.key });
  const { layers, shards } = shardModel(FsdpLinear, comm, e);
  if (measure) await memory.mark(MARKS.sharded, { key: measure.key });
  const opt = new optim.AdamW(shards, e.opts);
  const out: FsdpResult = { params: [], grads: [], before: [], gradProblems: [] };
  for (let s = 0; s < e.steps; s++) {
    const measured = measure?.step === s;
    // Made before the step's first mark, so that it sits in every mark of the step alike.
    if (measured) out.before.push(noGrad(() => (shards.length ? cat(shards.map((t) => t.detach().to('float32'))) : zeros([0]))));
    const { flat, problem } = await trainStep(comm, layers, shards, opt, e, s, measured ? measure.key : undefined, measured ? fence : undefined);
    if (measure && s + 1 < e.steps) continue;
    out.grads.push(flat);
    out.gradProblems.push(problem);
    out.params.push(noGrad(() => (shards.length ? cat(shards.map((t) => t.detach().to('float32'))) : zeros([0]))));
  }
  return out;
}
