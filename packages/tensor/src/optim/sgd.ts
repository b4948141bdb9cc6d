/**
 * Stochastic gradient descent with momentum and weight decay, with torch's
 * update (dampening 0, no Nesterov by default):
 *
 *     g = grad + weightDecay·p
 *     buf = g                            (first step)
 *     buf = momentum·buf + (1 - dampening)·g
 *     g = nesterov ? g + momentum·buf : buf
 *     p = p - lr·g
 */
import type { Tensor } from '../tensor.ts';
import { zerosLike } from '../creation.ts';
import { Optimizer, definedOptions, dense } from './optimizer.ts';
import { charge } from '../meter/charge.ts';
import { labelStorage } from '../meter/allocation.ts';
import { bytesPerElement } from '../dtype.ts';

/** Options of `SGD`. */
export interface SGDOptions {
  lr: number;
  momentum?: number;
  dampening?: number;
  weightDecay?: number;
  nesterov?: boolean;
}

/** State of one parameter: the momentum buffer (absent without momentum). */
export interface SGDState {
  momentumBuffer: Tensor | null;
}

/** SGD with momentum and weight decay, update for update as torch.optim.SGD. */
export class SGD extends Optimizer<SGDState> {
  readonly options: Required<SGDOptions>;

  constructor(params: Iterable<Tensor>, opts: SGDOptions) {
    super(params);
    if (!(opts?.lr >= 0)) throw new RangeError(`SGD: lr must be a non-negative number, got ${opts?.lr}`);
    this.options = { momentum: 0, dampening: 0, weightDecay: 0, nesterov: false, ...definedOptions(opts), lr: opts.lr };
  }

  protected update(p: Tensor, grad: Tensor): void {
    const { lr, momentum, dampening, weightDecay, nesterov } = this.options;
    const w = dense(p);
    const g = dense(grad.contiguous());
    let state = this.state.get(p);
    const first = state === undefined;
    if (!state) {
      state = { momentumBuffer: momentum !== 0 ? zerosLike(p) : null };
      if (state.momentumBuffer) labelStorage(state.momentumBuffer._storage.data.buffer, 'optimizer state');
      this.state.set(p, state);
    }
    const buf = state.momentumBuffer ? dense(state.momentumBuffer) : null;
    // As one fused kernel: per element 2 FLOPs for weight decay, 3 for momentum, 2 for Nesterov, 2 for the update;
    // reads p, grad (and the buffer), writes p (and the buffer).
    const flops = w.length * ((weightDecay !== 0 ? 2 : 0) + (buf ? 3 : 0) + (buf && nesterov ? 2 : 0) + 2);
    charge('sgd step', flops, w.length * (buf ? 5 : 3) * bytesPerElement(p.dtype), p.dtype);
    for (let i = 0; i < w.length; i++) {
      let d = g[i]! + weightDecay * w[i]!;
      if (buf) {
        buf[i] = first ? d : momentum * buf[i]! + (1 - dampening) * d;
        d = nesterov ? d + momentum * buf[i]! : buf[i]!;
      }
      w[i] = w[i]! - lr * d;
    }
    p._storage.version++;
  }
}
