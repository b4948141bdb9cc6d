/**
 * Adam and AdamW, update for update as torch.optim (single-tensor path):
 *
 *     t = t + 1
 *     AdamW: p = p·(1 - lr·weightDecay)      Adam: g = g + weightDecay·p
 *     m = β1·m + (1 - β1)·g
 *     v = β2·v + (1 - β2)·g²
 *     p = p - (lr / (1 - β1^t)) · m / (√v / √(1 - β2^t) + eps)
 *
 * The moments m and v are the optimizer state: two extra values per
 * parameter element, which is what ZeRO shards across ranks.
 */
import type { Tensor } from '../tensor.ts';
import { zerosLike } from '../creation.ts';
import { Optimizer, definedOptions, dense } from './optimizer.ts';
import { charge } from '../meter/charge.ts';
import { labelStorage } from '../meter/allocation.ts';
import { bytesPerElement } from '../dtype.ts';

/** Options of `Adam` and `AdamW`. */
export interface AdamOptions {
  lr?: number;
  betas?: [number, number];
  eps?: number;
  weightDecay?: number;
}

/** State of one parameter: the step count and the two moment estimates. */
export interface AdamState {
  step: number;
  expAvg: Tensor;
  expAvgSq: Tensor;
}

/** Adam (weight decay added to the gradient, L2-style). Defaults: lr 1e-3, betas (0.9, 0.999), eps 1e-8, weightDecay 0. */
export class Adam extends Optimizer<AdamState> {
  readonly options: Required<AdamOptions>;
  protected readonly decoupled: boolean = false;

  constructor(params: Iterable<Tensor>, opts: AdamOptions = {}, defaultWeightDecay = 0) {
    super(params);
    this.options = { lr: 1e-3, betas: [0.9, 0.999], eps: 1e-8, weightDecay: defaultWeightDecay, ...definedOptions(opts) };
    const { lr, betas, eps } = this.options;
    if (!(lr >= 0)) throw new RangeError(`Adam: lr must be a non-negative number, got ${lr}`);
    if (!betas.every((b) => b >= 0 && b < 1)) throw new RangeError(`Adam: betas must be in [0, 1), got [${betas.join(', ')}]`);
    if (!(eps >= 0)) throw new RangeError(`Adam: eps must be non-negative, got ${eps}`);
  }

  protected update(p: Tensor, grad: Tensor): void {
    const { lr, betas: [b1, b2], eps, weightDecay } = this.options;
    let state = this.state.get(p);
    if (!state) {
      state = { step: 0, expAvg: zerosLike(p), expAvgSq: zerosLike(p) };
      labelStorage(state.expAvg._storage.data.buffer, 'optimizer state');
      labelStorage(state.expAvgSq._storage.data.buffer, 'optimizer state');
      this.state.set(p, state);
    }
    state.step++;
    const w = dense(p);
    const g = dense(grad.contiguous());
    const m = dense(state.expAvg);
    const v = dense(state.expAvgSq);
    const bc1 = 1 - b1 ** state.step;
    const bc2Sqrt = Math.sqrt(1 - b2 ** state.step);
    const stepSize = lr / bc1;
    const decay = this.decoupled ? 1 - lr * weightDecay : 1;
    const l2 = this.decoupled ? 0 : weightDecay;
    // As one fused kernel: 16 FLOPs per element (the loop below); reads p, grad, m, v and writes p, m, v.
    charge(this.decoupled ? 'adamw step' : 'adam step', 16 * w.length, 7 * w.length * bytesPerElement(p.dtype), p.dtype);
    for (let i = 0; i < w.length; i++) {
      const wi = w[i]! * decay;
      const gi = g[i]! + l2 * w[i]!;
      m[i] = b1 * m[i]! + (1 - b1) * gi;
      v[i] = b2 * v[i]! + (1 - b2) * gi * gi;
      w[i] = wi - (stepSize * m[i]!) / (Math.sqrt(v[i]!) / bc2Sqrt + eps);
    }
    p._storage.version++;
  }
}

/** AdamW: Adam with decoupled weight decay (the parameter shrinks by lr·weightDecay each step). Default weightDecay 1e-2. */
export class AdamW extends Adam {
  protected override readonly decoupled: boolean = true;

  constructor(params: Iterable<Tensor>, opts: AdamOptions = {}) {
    super(params, opts, 1e-2);
  }
}
