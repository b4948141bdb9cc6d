/**
 * Rank programs of the ex09 public checks: they run in the rank workers,
 * build the submission's ParallelMLP from the unsharded weights, run one
 * forward and one backward of the loss sum(y ⊙ upstream), and hand back the
 * output and every gradient.
 *
 * After the forward and after the backward each rank passes a secret fence
 * (`fencer` of @dtlab/grader's fences.ts: an empty message to itself under a
 * tag drawn by the check from its secret for each launch), so the checker
 * can tell the forward's messages from the backward's; the tags reach only
 * this program, and the fence keeps the Comm's own methods, bound before the
 * submission loads, so a submission can neither send a fence of its own nor
 * hold one back.
 */
import type { Comm } from '@dtlab/runtime';
import { Tensor, zeros } from '@dtlab/tensor';
import { fencer, loadExport, type ValueShape } from '@dtlab/grader';
import { fullWeights, input, upstream, type FullWeights, type MLPSpec } from './data.ts';

/** The submission's model, as the rank programs use it. */
export interface ParallelMLPLike {
  forward(x: Tensor): Promise<Tensor>;
  w1?: unknown;
  b1?: unknown;
  w2?: unknown;
  b2?: unknown;
}
export type ParallelMLPClass = new (comm: Comm, full: FullWeights) => ParallelMLPLike;

/** The names of the four parameters, in order. */
export const PARAMS = ['w1', 'b1', 'w2', 'b2'] as const;

/** What a rank hands back: copies of the output and of every gradient, and what could not be read. */
export interface PassResult {
  y: Tensor;
  /** x.grad, and each parameter's .grad (empty tensors where `missing` says so). */
  x: Tensor;
  w1: Tensor;
  b1: Tensor;
  w2: Tensor;
  b2: Tensor;
  /** What was not a tensor: "w1 (no such field)", "x.grad (null)", ... */
  missing: string[];
}

/** The shape `ctx.run` checks on what a rank returns. */
export const PASS_RESULT: ValueShape = { object: { y: 'tensor', x: 'tensor', w1: 'tensor', b1: 'tensor', w2: 'tensor', b2: 'tensor', missing: { array: 'string' } } };

/** A detached copy of `v` if it is a tensor; otherwise an empty tensor and a line in `missing`. */
function copyOf(v: unknown, name: string, missing: string[]): Tensor {
  if (v instanceof Tensor) return v.detach().clone();
  missing.push(`${name} (${v === null ? 'null' : v === undefined ? 'undefined' : typeof v})`);
  return zeros([0]);
}

/** A copy of every unsharded weight, so that what the submission does to its argument cannot reach ours. */
export function copies(w: FullWeights): FullWeights {
  return { w1: w.w1.clone(), b1: w.b1.clone(), w2: w.w2.clone(), b2: w.b2.clone() };
}


/**
 * One forward and one backward of the submission's ParallelMLP on the
 * spec's input, with a fence after each (`fences`: the two tags); returns the output, x.grad and
 * every parameter's gradient, read from the model's documented fields.
 */
export async function mlpPass(comm: Comm, entry: string, spec: MLPSpec, fences: number[]): Promise<PassResult> {
  if (!Array.isArray(fences) || fences.length !== 2 || !fences.every((t) => Number.isSafeInteger(t) && t >= 0)) throw new TypeError(`mlpPass: expected two fence tags, got ${JSON.stringify(fences)}`);
  const fence = fencer(comm, fences); // before the submission loads
  const ParallelMLP = await loadExport<ParallelMLPClass>(entry, 'ParallelMLP');
  const model = new ParallelMLP(comm, copies(fullWeights(spec)));
  const x = input(spec);
  x.requiresGrad = true;
  const y = await model.forward(x);
  if (!(y instanceof Tensor)) throw new TypeError(`ParallelMLP.forward must resolve to a Tensor (the output [${spec.batch}, ${spec.outDim}]), but it resolved to ${y === null ? 'null' : typeof y}`);
  await fence(0);
  const loss = y.mul(upstream(spec)).sum();
  await loss.backwardAsync();
  await fence(1);
  const missing: string[] = [];
  const fields = model as unknown as Record<string, unknown>;
  const grad = (name: (typeof PARAMS)[number]) => {
    const p = fields[name];
    if (!(p instanceof Tensor)) return copyOf(p, `model.${name}`, missing);
    return copyOf(p.grad, `model.${name}.grad`, missing);
  };
  return { y: y.detach().clone(), x: copyOf(x.grad, 'x.grad', missing), w1: grad('w1'), b1: grad('b1'), w2: grad('w2'), b2: grad('b2'), missing };
}
