/**
 * Helpers every op uses: turning numbers into scalar tensors, reading a
 * tensor as a (broadcast) strided view, and recording an op in the graph.
 */
import type { DType } from '../dtype.ts';
import { allocate } from '../dtype.ts';
import { broadcastStrides } from '../shape.ts';
import { Tensor, type TensorLike } from '../tensor.ts';
import type { View } from '../kernels/strided.ts';
import { GradContext } from '../autograd/node.ts';
import { isGradEnabled } from '../autograd/grad-mode.ts';
import type { OpName } from '../autograd/rules.ts';

/** A number becomes a scalar tensor of `dtype`; a tensor is returned as is. */
export function asTensor(x: TensorLike, dtype: DType): Tensor {
  if (x instanceof Tensor) return x;
  if (typeof x !== 'number') throw new TypeError(`expected a Tensor or a number, got ${typeof x}`);
  const data = allocate(dtype, 1);
  data[0] = x;
  return Tensor._fromData(data, []);
}

/** `t` read as a strided view of the (broadcast) shape `target`. */
export function viewOf(t: Tensor, target: readonly number[] = t.shape): View {
  return { data: t._storage.data, strides: broadcastStrides(t.shape, t.strides, target), offset: t.offset };
}

/**
 * Makes `out` the result of `op` on `inputs` in the autograd graph, when grad
 * mode is on and some input requires grad. `opts` holds whatever the op's
 * gradient rule needs beyond inputs and output.
 */
export function record(op: OpName, out: Tensor, inputs: readonly Tensor[], opts: Record<string, unknown> = {}): Tensor {
  if (isGradEnabled() && inputs.some((t) => t.requiresGrad)) {
    out._requiresGrad = true;
    out._node = { op, inputs, ctx: new GradContext(op, inputs, out, opts) };
  }
  return out;
}
