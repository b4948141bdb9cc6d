/**
 * The backward pass. Sort the graph topologically from the output, then walk
 * it in reverse: each node receives its complete gradient before it passes
 * gradients on to its inputs. Leaves add what they receive to `.grad`.
 *
 * The walk is written once, as a generator that hands out a promise wherever
 * something asynchronous must finish first: a custom function's backward
 * that communicates, or a hook that does. `backward()` drives it without
 * waiting (and refuses what would need a wait); `backwardAsync()` awaits each
 * promise in turn, so communication inside backward happens in graph order.
 */
import { AutogradError, fmtShape } from '../errors.ts';
import { sameShape } from '../shape.ts';
import type { Tensor } from '../tensor.ts';
import { noGrad } from './grad-mode.ts';
import { gradRules, type GradRule } from './rules.ts';
import { sumTo } from '../ops/reduce.ts';
import { cast } from '../ops/pointwise.ts';
import { clone } from '../ops/movement.ts';
import { asTensor } from '../ops/record.ts';

/** Tensors reachable from `root` that require grad, each after all tensors computed from it. */
function topoOrder(root: Tensor): Tensor[] {
  const order: Tensor[] = [];
  const seen = new Set<Tensor>();
  // Iterative depth-first search: deep graphs (long training loops) must not overflow the stack.
  const stack: [Tensor, number][] = [[root, 0]];
  seen.add(root);
  while (stack.length > 0) {
    const top = stack[stack.length - 1]!;
    const [t, next] = top;
    const inputs = t._node?.inputs ?? [];
    if (next < inputs.length) {
      top[1]++;
      const child = inputs[next]!;
      if (child.requiresGrad && !seen.has(child)) {
        seen.add(child);
        stack.push([child, 0]);
      }
    } else {
      stack.pop();
      order.push(t);
    }
  }
  return order.reverse();
}

/** Something the walk must wait for: `where` says what, for the message when a synchronous backward cannot. */
interface Pending {
  promise: Promise<unknown>;
  where: string;
  /** A post-accumulate hook's promise: a synchronous backward leaves it running, as it always has. */
  optional: boolean;
}

function isPromise(x: unknown): x is Promise<unknown> {
  return x !== null && typeof x === 'object' && typeof (x as { then?: unknown }).then === 'function';
}

function check(root: Tensor, gradient: Tensor | undefined): void {
  if (!root.requiresGrad) {
    throw new AutogradError('backward', 'this tensor does not require grad: no input of the computation had requiresGrad set (or it ran inside noGrad)');
  }
  if (gradient === undefined && root.numel !== 1) {
    throw new AutogradError('backward', `a gradient can be created implicitly only for a one-element output, but the output has shape ${fmtShape(root.shape)}; call backward(gradient) or reduce it first (e.g. .sum())`);
  }
  if (gradient !== undefined && !sameShape(gradient.shape, root.shape)) {
    throw new AutogradError('backward', `gradient has shape ${fmtShape(gradient.shape)} but the output has shape ${fmtShape(root.shape)}`);
  }
}

/** The backward walk from `root`; yields what it must wait for and takes back the awaited value. */
function* walk(root: Tensor, gradient: Tensor | undefined): Generator<Pending, void, unknown> {
  check(root, gradient);
  const grads = new Map<Tensor, Tensor>();
  grads.set(root, gradient ?? asTensor(1, root.dtype).expand([...root.shape]));
  for (const t of topoOrder(root)) {
    let g = grads.get(t);
    if (g === undefined) continue;
    grads.delete(t);
    for (const hook of t._hooks) {
      let r: unknown = hook(g);
      if (isPromise(r)) r = yield { promise: r, where: 'a gradient hook (registerHook) returned a promise', optional: false };
      g = (r as Tensor | undefined) ?? g;
    }
    if (t.isLeaf || t._retainsGrad) accumulate(t, g);
    if (t.isLeaf) {
      for (const hook of t._postAccumulateHooks) {
        const r: unknown = hook(t);
        if (isPromise(r)) yield { promise: r, where: 'a post-accumulate-grad hook returned a promise', optional: true };
      }
      continue;
    }
    const node = t._node!;
    const needs = node.inputs.map((x) => x.requiresGrad);
    let inputGrads: unknown;
    if (node.backward) {
      inputGrads = node.backward(g, needs);
      if (isPromise(inputGrads)) inputGrads = yield { promise: inputGrads, where: `the backward of custom function '${node.op}' is asynchronous`, optional: false };
    } else {
      const rule = (gradRules as Record<string, GradRule | undefined>)[node.op];
      if (!rule) throw new Error(`BUG: no gradient rule for op '${node.op}'`);
      inputGrads = rule(g, node.ctx!, needs);
    }
    const list = inputGrads as (Tensor | null | undefined)[];
    if (!Array.isArray(list) || list.length !== node.inputs.length) {
      const got = Array.isArray(list) ? `${list.length} gradients` : String(list);
      throw new Error(`${node.backward ? '' : 'BUG: '}gradient rule '${node.op}' returned ${got}, expected ${node.inputs.length}`);
    }
    node.inputs.forEach((input, i) => {
      const gi = list[i];
      if (!needs[i] || !gi) return;
      const fitted = cast(sumTo(gi, input.shape), input.dtype);
      const prev = grads.get(input);
      grads.set(input, prev ? prev.add(fitted) : fitted);
    });
  }
}

/**
 * Runs backward from `root` with seed gradient `gradient` (1 for a scalar
 * root), synchronously. A promise from a post-accumulate-grad hook is left
 * running; anything else asynchronous (a custom function's async backward, a
 * gradient hook returning a promise) is refused: use `backwardAsync`.
 */
export function backward(root: Tensor, gradient?: Tensor): void {
  const steps = walk(root, gradient);
  noGrad(() => {
    for (let r = steps.next(); !r.done; r = steps.next(undefined)) {
      if (r.value.optional) continue;
      void r.value.promise.catch(() => undefined); // its failure is reported by the error below
      steps.return(undefined);
      throw new AutogradError('backward', `${r.value.where}, so this backward pass must wait for it: use \`await loss.backwardAsync()\` instead of \`loss.backward()\``);
    }
  });
}

/**
 * Runs backward from `root`, awaiting every asynchronous step in graph order:
 * a custom function's async backward, and promises returned by gradient and
 * post-accumulate-grad hooks. Gradient computation itself runs with grad
 * recording off, as in `backward()`.
 */
export async function backwardAsync(root: Tensor, gradient?: Tensor): Promise<void> {
  const steps = walk(root, gradient);
  let r = noGrad(() => steps.next());
  while (!r.done) {
    let value: unknown;
    try {
      value = await r.value.promise;
    } catch (e) {
      r = noGrad(() => steps.throw(e));
      continue;
    }
    r = noGrad(() => steps.next(value));
  }
}

/** Adds `g` into `t.grad`, in place once it exists, so references to `.grad` stay valid. */
function accumulate(t: Tensor, g: Tensor): void {
  if (t.grad === null) {
    // A private, contiguous copy: `g` may be a broadcast view or shared with another input.
    t.grad = clone(g);
  } else {
    t.grad.add_(g);
  }
}
