/**
 * The backward pass. Sort the graph topologically from the output, then walk
 * it in reverse: each node receives its complete gradient before it passes
 * gradients on to its inputs. Leaves add what they receive to `.grad`.
 */
import { AutogradError, fmtShape } from '../errors.ts';
import { sameShape } from '../shape.ts';
import type { Tensor } from '../tensor.ts';
import { noGrad } from './grad-mode.ts';
import { gradRules } from './rules.ts';
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

/** Runs backward from `root` with seed gradient `gradient` (1 for a scalar root). */
export function backward(root: Tensor, gradient?: Tensor): void {
  if (!root.requiresGrad) {
    throw new AutogradError('backward', 'this tensor does not require grad: no input of the computation had requiresGrad set (or it ran inside noGrad)');
  }
  if (gradient === undefined && root.numel !== 1) {
    throw new AutogradError('backward', `a gradient can be created implicitly only for a one-element output, but the output has shape ${fmtShape(root.shape)}; call backward(gradient) or reduce it first (e.g. .sum())`);
  }
  if (gradient !== undefined && !sameShape(gradient.shape, root.shape)) {
    throw new AutogradError('backward', `gradient has shape ${fmtShape(gradient.shape)} but the output has shape ${fmtShape(root.shape)}`);
  }
  noGrad(() => {
    const grads = new Map<Tensor, Tensor>();
    grads.set(root, gradient ?? asTensor(1, root.dtype).expand([...root.shape]));
    for (const t of topoOrder(root)) {
      let g = grads.get(t);
      if (g === undefined) continue;
      grads.delete(t);
      for (const hook of t._hooks) g = hook(g) ?? g;
      if (t.isLeaf || t._retainsGrad) accumulate(t, g);
      if (t.isLeaf) {
        for (const hook of t._postAccumulateHooks) hook(t);
        continue;
      }
      const node = t._node!;
      const rule = gradRules[node.op];
      if (!rule) throw new Error(`BUG: no gradient rule for op '${node.op}'`);
      const needs = node.inputs.map((x) => x.requiresGrad);
      const inputGrads = rule(g, node.ctx, needs);
      if (inputGrads.length !== node.inputs.length) {
        throw new Error(`BUG: gradient rule '${node.op}' returned ${inputGrads.length} gradients, expected ${node.inputs.length}`);
      }
      node.inputs.forEach((input, i) => {
        const gi = inputGrads[i];
        if (!needs[i] || !gi) return;
        const fitted = cast(sumTo(gi, input.shape), input.dtype);
        const prev = grads.get(input);
        grads.set(input, prev ? prev.add(fitted) : fitted);
      });
    }
  });
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
