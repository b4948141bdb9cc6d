/**
 * The optimizer base: a list of parameters, per-parameter state that can be
 * inspected (`state.get(p)`), `zeroGrad()` and `step()`.
 */
import type { Tensor } from '../tensor.ts';
import { noGrad } from '../autograd/grad-mode.ts';

/** Base class of SGD, Adam and AdamW. `S` is the state kept per parameter. */
export abstract class Optimizer<S extends object> {
  /** Per-parameter state, created lazily on a parameter's first step. */
  readonly state = new Map<Tensor, S>();
  readonly params: readonly Tensor[];

  constructor(params: Iterable<Tensor>) {
    this.params = [...params];
    this.params.forEach((p, i) => {
      if (!p.isLeaf || !p.requiresGrad) throw new TypeError(`optimizer: parameter ${i}${p.name ? ` (${p.name})` : ''} must be a leaf tensor that requires grad`);
    });
  }

  /** Sets every parameter's `.grad` to null. */
  zeroGrad(): void {
    for (const p of this.params) p.grad = null;
  }

  /** Updates every parameter that has a gradient; parameters without one are skipped. */
  step(): void {
    noGrad(() => {
      for (const p of this.params) if (p.grad) this.update(p, p.grad);
    });
  }

  /** Updates one parameter in place from its gradient. */
  protected abstract update(p: Tensor, grad: Tensor): void;
}

/** A parameter, its gradient and state buffers as dense arrays of the parameter's layout. */
export function dense(t: Tensor): Float32Array | Float64Array {
  if (!t.isContiguous()) throw new Error(`BUG: optimizer expects contiguous tensors, got strides [${t.strides.join(',')}]`);
  return t._storage.data.subarray(t.offset, t.offset + t.numel);
}

/**
 * `opts` without its undefined entries. Spreading `{ momentum: undefined }`
 * over the defaults would replace a default with undefined (and every update
 * with NaN); an option passed as undefined means the default, as in torch.
 */
export function definedOptions<T extends object>(opts: T | undefined): Partial<T> {
  return Object.fromEntries(Object.entries(opts ?? {}).filter(([, v]) => v !== undefined)) as Partial<T>;
}
